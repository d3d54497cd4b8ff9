import Foundation
import IfmeterTestSupport
import Testing
@testable import IfmeterCore
@testable import ifmeter

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

    @Test(arguments: [("systemd/ifmeterd.service", 2), ("systemd/ifmeterd.socket", 1)])
    func theUnitsDocumentationNamesPagesThatShip(unit: String, count: Int) throws {
        let line = try #require(try Self.text(unit).split(separator: "\n").first { $0.hasPrefix("Documentation=") })
        let pages = line.dropFirst("Documentation=".count).split(separator: " ").filter { $0.hasPrefix("man:") }
        #expect(pages.count == count)
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

    // MARK: The command table: help, ifmeter(1) and the completions

    /// Every option of the table, once per meaning (`--all` has two).
    static let allOptions = OptionSpec.global + OptionSpec.leading + CommandName.allCases.flatMap(\.options)

    /// What the completions rely on: a spelling takes a value in every
    /// command or in none, and every value's placeholder says what completes it.
    @Test func everyOptionsValueHasAKind() {
        for name in Set(Self.allOptions.flatMap(\.names)) {
            let kinds = Self.allOptions.filter { $0.names.contains(name) }.map(\.kind)
            #expect(kinds.allSatisfy { $0 != nil }, "\(name): a placeholder the completions do not know")
            #expect(Set(kinds.map { "\(String(describing: $0))" }).count == 1, "\(name): \(kinds)")
        }
        #expect(Self.allOptions.count > 20)
    }

    /// The help the binary prints is the table's, and its prose names no
    /// option the command does not take (nor leaves out one it takes).
    @Test func theHelpTextsAreTheTables() throws {
        let overview = try runProcess(ifmeter, ["--help"])
        #expect(overview.status == 0)
        #expect(overview.standardOutput == CommandName.overview)
        // Besides the options: vnStat's view forms, named once.
        let vnstatForms = Set(Completions.shortForms.map(\.spelled)).subtracting(["-5"])
        #expect(Self.optionNames(in: CommandName.overview) == Set((OptionSpec.global + OptionSpec.leading).flatMap(\.names)).union(vnstatForms))
        for command in CommandName.allCases {
            #expect(CommandName.overview.contains("\n  \(command.rawValue) ") == !command.hidden, "\(command)")
            let help = try runProcess(ifmeter, [command.rawValue, "--help"])
            #expect(help.status == 0)
            #expect(help.standardOutput == command.help)
            #expect(Self.optionNames(in: command.help) == Set((command.options + OptionSpec.global).flatMap(\.names)), "\(command)")
            if let operand = command.operand { #expect(command.help.hasPrefix("Usage: ifmeter \(command.rawValue) \(operand.value)")) }
        }
    }

    /// The lines of a man page's section, without the .Sh line.
    static func section(_ name: String, of page: String) -> [Substring] {
        let lines = page.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(of: ".Sh \(name)"[...]) else { return [] }
        let rest = lines[(start + 1)...]
        return Array(rest[..<(rest.firstIndex { $0.hasPrefix(".Sh ") } ?? rest.endIndex)])
    }

    /// The macro words of each list item's head (`.It ...`, or `.It Xo` up to `.Xc`).
    static func itemHeads(in lines: [Substring]) -> [[Substring]] {
        var heads: [[Substring]] = []
        var open = false
        for line in lines {
            let words = line.drop { $0 == "." }.split(separator: " ")
            if line.hasPrefix(".It ") {
                heads.append(Array(words.dropFirst()))
                open = words.dropFirst().first == "Xo"
            } else if open {
                if line == ".Xc" { open = false } else { heads[heads.count - 1] += words }
            }
        }
        return heads
    }

    /// The options an mdoc head spells with Fl (`Fl -all` is --all, `Fl i` is -i).
    static func flags(in head: [Substring]) -> Set<String> {
        Set(zip(head, head.dropFirst()).filter { $0.0 == "Fl" }.map { "-" + $0.1 })
    }

    /// ifmeter(1) is written by hand, so it is held to the table both ways:
    /// each command's synopsis lists exactly its options, and OPTIONS
    /// explains each option of the table once, with all its spellings.
    @Test func theManPageDescribesTheTable() throws {
        let page = try Self.text("man/ifmeter.1")
        var described: [CommandName: Set<String>] = [:]
        for head in Self.itemHeads(in: Self.section("COMMANDS", of: page)) {
            let synopsis = head.firstIndex { $0 == "Op" || $0 == "Fl" } ?? head.endIndex
            let names = head[..<synopsis].compactMap { CommandName(rawValue: String($0)) }
            #expect(!names.isEmpty, "an item of COMMANDS names no command: \(head)")
            for name in names { #expect(described.updateValue(Self.flags(in: head), forKey: name) == nil, "ifmeter.1 has \(name) twice") }
        }
        for command in CommandName.allCases {
            let options = try #require(described[command], "ifmeter.1 lacks \(command)")
            // Any spelling: a synopsis shows -i for -i, --interface.
            for option in command.options { #expect(!options.isDisjoint(with: option.names), "ifmeter.1: \(command) lacks \(option.name)") }
            for name in options { #expect(command.options.contains { $0.names.contains(name) }, "ifmeter.1: \(command) does not take \(name)") }
            if let operand = command.operand {
                let head = Self.itemHeads(in: Self.section("COMMANDS", of: page)).first { $0.contains(Substring(command.rawValue)) } ?? []
                for choice in operand.choices { #expect(head.contains(Substring(choice)), "ifmeter.1: \(command) \(operand.value)") }
            }
        }
        let explained = Self.itemHeads(in: Self.section("OPTIONS", of: page)).map(Self.flags)
        #expect(Set(explained) == Set(Self.allOptions.map { Set($0.names) }))
        #expect(explained.count == Set(explained).count, "ifmeter.1 explains an option twice")
    }

    /// A value of its kind for each option, the parser's to accept.
    static func example(_ option: OptionSpec) -> [String] {
        switch option.kind {
        case .flag, nil: []
        case .file: ["/nonexistent/file"]
        case .directory: ["/"]
        case .interface: ["lo"]
        case .choice(let choices): [choices[0]]
        case .text: [option.value == "DATE" ? "2024-01-01" : "1"]
        }
    }

    /// What `ifmeter` needs besides the option under test to get past parsing.
    static let required: [CommandName: [(String, String)]] = [
        .live: [("--count", "1"), ("--interval", "0.1")],
        .graph: [("-o", "/nonexistent/graph.svg")],
        .check: [("--limit", "5GB"), ("-i", "lo")],
    ]

    /// The binary accepts every option of the table with a value of its kind
    /// (and every operand choice): the completions never offer what it refuses.
    @Test(arguments: CommandName.allCases)
    func theBinaryAcceptsEveryOptionOfTheTable(_ command: CommandName) throws {
        let base = ["--state-dir", "/nonexistent/state", "--config", "/dev/null", command.rawValue] + (command.operand.map { [$0.choices.first ?? "tun0"] } ?? [])
            + (command == .importHistory ? ["/nonexistent/vnstat.db"] : []) + (command == .rename || command == .merge ? ["tun1"] : [])
            + (command == .forget ? ["--force"] : [])
        for option in command.options + OptionSpec.global where option != .stateDirectory && option != .config {
            for name in option.names {
                let words = [name] + Self.example(option)
                // --svg stands in for -o, and excludes it.
                let extra = (Self.required[command] ?? []).filter { !option.names.contains($0.0) && option != .svg }.flatMap { [$0.0, $0.1] }
                let result = try runProcess(ifmeter, base + words + extra)
                // Past parsing, a name nothing counts is a usage error too
                // (lo is a link here, never counted).
                let unknownName = result.standardError.hasPrefix("ifmeter: no interface lo (known: ")
                    || result.standardError.hasPrefix("ifmeter: lo is a link here that ifmeter does not count")
                #expect(result.status != ExitCode.usage.rawValue || unknownName, "ifmeter \(command) \(words.joined(separator: " ")): \(result.standardError)")
            }
        }
        for choice in command.operand?.choices ?? [] where command != .importHistory {
            #expect(try runProcess(ifmeter, [command.rawValue, choice]).status == 0, "\(command) \(choice)")
        }
        if command == .importHistory {
            // Its one choice needs a file: a missing one is said, not a usage error.
            #expect(try runProcess(ifmeter, base).status == ExitCode.noInput.rawValue)
        }
    }

    // MARK: Completions

    static let shells = ["bash", "zsh", "fish"]

    @Test(arguments: shells)
    func completionNamesEveryCommandAndOption(_ shell: String) throws {
        let result = try runProcess(ifmeter, ["completions", shell])
        #expect(result.status == 0)
        #expect(result.standardOutput == Completions.script(for: try #require(Shell(rawValue: shell))))
        let script = result.standardOutput
        let words = Set(script.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "-") }).map(String.init))
        for command in CommandName.allCases { #expect(words.contains(command.rawValue), "\(shell) lacks \(command)") }
        for option in Self.allOptions {
            for name in option.names {
                // fish spells options without their dashes (-l state-dir, -s i).
                let spelled = shell == "fish" ? String(name.drop { $0 == "-" }) : name
                #expect(words.contains(spelled), "\(shell) lacks \(name)")
            }
        }
        // vnStat's -d and the like, completed as the command each stands for.
        for form in Completions.shortForms {
            let offered = shell == "fish" ? "-s \(form.spelled.dropFirst()) " : "\(form.spelled))"
            #expect(script.contains(offered), "\(shell) lacks \(form.spelled)")
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
        #expect(result.standardError == "ifmeter: completions tcsh: expected bash, zsh or fish (see 'ifmeter completions --help')\n")
        #expect(result.standardOutput.isEmpty)
        let none = try runProcess(ifmeter, ["completions"])
        #expect(none.status == ExitCode.usage.rawValue)
        #expect(none.standardError == "ifmeter: completions needs SHELL: bash, zsh or fish (see 'ifmeter completions --help')\n")
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
        (["ifmeter", "days", "--vers"], []),
        (["ifmeter", "co"], []),
        (["ifmeter", "completions", "z"], ["zsh"]),
        (["ifmeter", "--config", "/dev/null", "st"], ["status"]),
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

    /// A bash run of `_ifmeter` over a command line: the words it offers.
    func bashOffers(_ line: [String]) throws -> [String] {
        let script = try runProcess(ifmeter, ["completions", "bash"]).standardOutput
        let words = line.map { "'\($0)'" }.joined(separator: " ")
        let probe = script + """
            COMP_WORDS=(\(words)); COMP_CWORD=\(line.count - 1); _ifmeter
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let result = try runProcess("/bin/bash", ["--norc", "-c", probe])
        #expect(result.status == 0, "\(result.standardError)")
        return result.standardOutput.split(separator: "\n").map(String.init)
    }

    /// bash offers each command exactly the options the table gives it,
    /// and before a command the commands users see and the options valid there.
    @Test func bashOffersWhatTheTableHolds() throws {
        for command in CommandName.allCases {
            let offered = try bashOffers(["ifmeter", command.rawValue, "-"])
            #expect(offered.sorted() == (command.options + OptionSpec.global).flatMap(\.names).sorted(), "\(command)")
        }
        #expect(try bashOffers(["ifmeter", "-"]).sorted() == ((OptionSpec.global + OptionSpec.leading).flatMap(\.names) + Completions.shortForms.map(\.spelled)).sorted())
        #expect(try bashOffers(["ifmeter", "-d", "-"]).sorted() == (CommandName.days.options + OptionSpec.global).flatMap(\.names).sorted())
        #expect(try bashOffers(["ifmeter", ""]) == CommandName.allCases.filter { !$0.hidden }.map(\.rawValue))
    }

    /// The same for fish, which lists short and long spellings alike.
    @Test func fishOffersWhatTheTableHolds() throws {
        let directory = try TestEnvironment.temporaryDirectory("completion")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("ifmeter.fish").path
        try runProcess(ifmeter, ["completions", "fish"]).standardOutput.write(toFile: file, atomically: true, encoding: .utf8)
        let lines = [("", OptionSpec.global + OptionSpec.leading)] + CommandName.allCases.map { ("\($0.rawValue) ", $0.options + OptionSpec.global) }
        let probe = "source \(file); " + lines.map { "complete -C 'ifmeter \($0.0)-'; echo ==" }.joined(separator: "; ")
        let result = try runProcess("/usr/bin/fish", ["--no-config", "-c", probe])
        #expect(result.status == 0, "\(result.standardError)")
        let blocks = result.standardOutput.split(separator: "==\n", omittingEmptySubsequences: false)
        try #require(blocks.count == lines.count + 1)
        for (block, (prefix, options)) in zip(blocks, lines) {
            let offered = block.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }
            let shortForms = prefix.isEmpty ? Completions.shortForms.map(\.spelled) : []
            #expect(offered.sorted() == (options.flatMap(\.names) + shortForms).sorted(), "ifmeter \(prefix)-")
        }
    }

    static let fishCases: [(line: String, offered: [String])] = [
        ("ifmeter da", ["days"]),
        ("ifmeter export --format ", ["csv", "jsonl"]),
        ("ifmeter days --li", ["--limit"]),
        ("ifmeter --vers", ["--version"]),
        ("ifmeter days --vers", []),
        ("ifmeter co", []),
        ("ifmeter completions ", ["bash", "fish", "zsh"]),
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
