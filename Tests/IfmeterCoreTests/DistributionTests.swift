import Foundation
import Testing
@testable import IfmeterCore

/// What ships beside the binaries: the version, the man pages and the shell
/// completions, each held to the code it describes.
@Suite struct DistributionTests {
    static let checkout = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func text(_ path: String) throws -> String {
        try String(contentsOf: checkout.appendingPathComponent(path), encoding: .utf8)
    }

    let ifmeter = TestEnvironment.binary("ifmeter")
    let ifmeterd = TestEnvironment.binary("ifmeterd")

    // MARK: Version

    @Test func bothExecutablesPrintTheOneVersion() throws {
        #expect(Version.number.split(separator: ".").count == 3 && Version.number.allSatisfy { $0.isNumber || $0 == "." })
        for (binary, name) in [(ifmeter, "ifmeter"), (ifmeterd, "ifmeterd")] {
            let result = try runProcess(binary, ["--version"])
            #expect(result.status == 0)
            #expect(result.standardOutput == "\(name) \(Version.number)\n")
            #expect(result.standardError.isEmpty)
        }
    }

    @Test func theChangelogsNewestEntryIsThisVersion() throws {
        let heading = try #require(try Self.text("CHANGELOG.md").split(separator: "\n").first { $0.hasPrefix("## ") })
        #expect(heading == "## \(Version.number)")
    }

    // MARK: Man pages

    static let manPages = ["man/ifmeter.1", "man/ifmeterd.8", "man/ifmeter.conf.5"]

    @Test(arguments: manPages)
    func manPageLintsClean(_ page: String) throws {
        let result = try runProcess("/usr/bin/mandoc", ["-Tlint", "-W", "warning", Self.checkout.appendingPathComponent(page).path])
        #expect(result.status == 0)
        #expect(result.standardOutput.isEmpty, "\(result.standardOutput)")
        #expect(result.standardError.isEmpty, "\(result.standardError)")
    }

    @Test func theUnitsDocumentationNamesPagesThatShip() throws {
        let line = try #require(try Self.text("systemd/ifmeterd.service").split(separator: "\n").first { $0.hasPrefix("Documentation=") })
        let pages = line.dropFirst("Documentation=".count).split(separator: " ").filter { $0.hasPrefix("man:") }
        #expect(pages.count == 2)
        for page in pages {
            // man:NAME(SECTION) -> man/NAME.SECTION
            let name = page.dropFirst(4).replacingOccurrences(of: "(", with: ".").replacingOccurrences(of: ")", with: "")
            #expect(Self.manPages.contains("man/\(name)"), "\(page)")
        }
    }

    /// Words of the form -x or --name in a text.
    static func optionNames(in text: some StringProtocol) -> Set<String> {
        var names: Set<String> = []
        for word in text.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "-") }) {
            let trimmed = word.drop { $0 == "-" }
            let dashes = word.count - trimmed.count
            guard (dashes == 1 && trimmed.count == 1 || dashes == 2 && trimmed.count > 1), trimmed.first?.isLetter == true,
                  !trimmed.hasSuffix("-") else { continue }
            names.insert(String(word))
        }
        return names
    }

    /// The text mandoc renders, without its overstrike (X backspace X for
    /// bold, _ backspace X for italics).
    static func rendered(_ page: String) throws -> String {
        let output = try runProcess("/usr/bin/mandoc", ["-Tascii", "-Owidth=200", checkout.appendingPathComponent(page).path]).standardOutput
        var plain = String.UnicodeScalarView()
        for scalar in output.unicodeScalars {
            if scalar == "\u{8}" { plain.removeLast() } else { plain.append(scalar) }
        }
        return String(plain)
    }

    @Test func ifmeterManPageNamesEveryCommandAndOption() throws {
        let page = try Self.rendered("man/ifmeter.1")
        let named = Self.optionNames(in: page)
        for option in CommandTable.globals + CommandTable.leading + CommandTable.commands.flatMap(\.options) {
            for name in option.names { #expect(named.contains(name) || named.contains(String(name.dropFirst())), "ifmeter.1 lacks \(name)") }
        }
        for command in CommandTable.commands { #expect(page.contains(command.name), "ifmeter.1 lacks \(command.name)") }
    }

    @Test func ifmeterdManPageNamesEveryOptionOfItsHelp() throws {
        let help = try runProcess(ifmeterd, ["--help"]).standardOutput
        let page = Self.optionNames(in: try Self.rendered("man/ifmeterd.8"))
        let options = Self.optionNames(in: help)
        #expect(options.count >= 9)
        for option in options { #expect(page.contains(option) || page.contains(String(option.dropFirst())), "ifmeterd.8 lacks \(option)") }
    }

    @Test func configurationManPageNamesEveryKeyOfTheShippedFile() throws {
        let page = try Self.rendered("man/ifmeter.conf.5")
        let keys = try Self.text("systemd/ifmeter.conf").split(separator: "\n").compactMap { line -> String? in
            let body = line.drop { $0 == "#" }
            guard let equals = body.firstIndex(of: "="), body.first?.isUppercase == true else { return nil }
            return String(body[..<equals])
        }
        #expect(keys.count >= 10)
        for key in keys { #expect(page.contains(key + "="), "ifmeter.conf.5 lacks \(key)=") }
        for section in ["Daemon", "Interfaces", "Classes", "Retention", "Budgets"] { #expect(page.contains("[\(section)]")) }
    }

    // MARK: The command table

    /// The table holds what each help text names, and nothing else.
    /// What `ifmeter` needs besides the option under test to get past parsing.
    static let required: [String: [(String, String)]] = [
        "live": [("--count", "1"), ("--interval", "0.1")],
        "graph": [("--svg", "/nonexistent/graph.svg")],
    ]

    /// The parser accepts every option of the table with a value of its kind:
    /// the completions never offer what `ifmeter` refuses.
    @Test(arguments: CommandTable.commands.map(\.name))
    func theParserAcceptsEveryOptionOfTheTable(_ name: String) throws {
        let command = try #require(CommandTable.commands.first { $0.name == name })
        let base = ["--state-dir", "/nonexistent/state", "--config", "/dev/null", name]
        for option in command.options + CommandTable.globals where !option.names.contains("--state-dir") && !option.names.contains("--config") {
            for optionName in option.names {
                let words = [optionName] + (option.example.map { [$0] } ?? [])
                let extra = (Self.required[name] ?? []).filter { $0.0 != optionName }.flatMap { [$0.0, $0.1] }
                let result = try runProcess(ifmeter, base + words + extra)
                #expect(result.status != ExitCode.usage.rawValue, "ifmeter \(name) \(words.joined(separator: " ")): \(result.standardError)")
            }
        }
        if command.interfaceOperands {
            #expect(try runProcess(ifmeter, base + ["lo"]).status != ExitCode.usage.rawValue)
        }
    }

    // MARK: Completions

    static let shells = ["bash", "zsh", "fish"]

    @Test(arguments: shells)
    func completionNamesEveryCommandAndOption(_ shell: String) throws {
        let result = try runProcess(ifmeter, ["completions", shell])
        #expect(result.status == 0)
        let script = result.standardOutput
        let words = Set(script.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "-") }).map(String.init))
        for command in CommandTable.commands { #expect(words.contains(command.name), "\(shell) lacks \(command.name)") }
        for option in CommandTable.globals + CommandTable.leading + CommandTable.commands.flatMap(\.options) {
            for name in option.names {
                // fish spells options without their dashes (-l state-dir, -s i).
                let spelled = shell == "fish" ? String(name.drop { $0 == "-" }) : name
                #expect(words.contains(spelled), "\(shell) lacks \(name)")
            }
        }
    }

    @Test(arguments: shells)
    func completionScriptParses(_ shell: String) throws {
        let directory = try TestEnvironment.temporaryDirectory("completion")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("ifmeter.\(shell)").path
        try runProcess(ifmeter, ["completions", shell]).standardOutput.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try runProcess("/usr/bin/\(shell)", ["-n", file])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.isEmpty, "\(result.standardError)")
    }

    @Test func unknownShellIsAUsageError() throws {
        let result = try runProcess(ifmeter, ["completions", "tcsh"])
        #expect(result.status == ExitCode.usage.rawValue)
        #expect(result.standardError == "ifmeter: usage: ifmeter completions bash|zsh|fish\n")
    }

    /// What bash offers after each partial command line, run for real.
    static let bashCases: [(line: [String], offered: [String])] = [
        (["ifmeter", "da"], ["days"]),
        (["ifmeter", "--json", "days", "--l"], ["--limit"]),
        (["ifmeter", "export", "--format", ""], ["csv", "jsonl"]),
        (["ifmeter", "export", "--granularity", "h"], ["hour"]),
        (["ifmeter", "days", "-i", "l"], ["lo"]),
        (["ifmeter", "--state-dir", "/tmp", "ev"], ["events"]),
        (["ifmeter", "interfaces", "--a"], ["--all"]),
        (["ifmeter", "--vers"], ["--version"]),
    ]

    @Test(arguments: bashCases)
    func bashCompletes(_ testCase: (line: [String], offered: [String])) throws {
        let script = try runProcess(ifmeter, ["completions", "bash"]).standardOutput
        let words = testCase.line.map { "'\($0)'" }.joined(separator: " ")
        let probe = script + """
            COMP_WORDS=(\(words)); COMP_CWORD=\(testCase.line.count - 1); _ifmeter
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let result = try runProcess("/bin/bash", ["--norc", "-c", probe])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.split(separator: "\n").map(String.init) == testCase.offered)
    }

    static let fishCases: [(line: String, offered: [String])] = [
        ("ifmeter da", ["days"]),
        ("ifmeter export --format ", ["csv", "jsonl"]),
        ("ifmeter days --li", ["--limit"]),
        ("ifmeter --vers", ["--version"]),
        ("ifmeter days --vers", []),
    ]

    @Test(arguments: fishCases)
    func fishCompletes(_ testCase: (line: String, offered: [String])) throws {
        let directory = try TestEnvironment.temporaryDirectory("completion")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("ifmeter.fish").path
        try runProcess(ifmeter, ["completions", "fish"]).standardOutput.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try runProcess("/usr/bin/fish", ["--no-config", "-c", "source \(file); complete -C '\(testCase.line)'"])
        #expect(result.status == 0, "\(result.standardError)")
        let offered = result.standardOutput.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }
        #expect(offered == testCase.offered)
    }
}
