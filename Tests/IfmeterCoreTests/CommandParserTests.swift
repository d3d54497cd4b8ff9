import Testing
@testable import IfmeterCore
@testable import ifmeter

/// The command line as data: the pure parse, table-tested without a process.
@Suite struct CommandParserTests {
    static let parsed: [(words: [String], command: Command)] = [
        ([], .status(names: [], DisplayOptions())),
        (["--json"], .status(names: [], DisplayOptions(json: true))),
        (["status", "wwan0", "--si"], .status(names: ["wwan0"], DisplayOptions(units: Units(scale: .si)))),
        (["--bytes", "days", "-i", "a", "--interface=b", "--limit", "3"],
         .history(.days, names: ["a", "b"], limit: 3, TimeRange(), DisplayOptions(units: Units(scale: .raw)))),
        (["events", "--limit=5", "--json"], .events(names: [], limit: 5, json: true)),
        (["live", "--interval", "0.5", "--count", "2", "--byte-rates"],
         .live(interval: 0.5, count: 2, DisplayOptions(units: Units(ratesInBits: false)))),
        (["export", "--format", "jsonl", "--granularity", "5min"], .export(.jsonl, .fiveMinutes, TimeRange())),
        (["graph", "--svg", "-", "--days", "7"], .graph(path: "-", days: 7)),
        (["interfaces", "--all"], .interfaces(all: true, json: false)),
        (["check", "--help"], .help(.check)),
        (["--help"], .help(nil)),
        (["-h", "days", "--limit", "2"], .help(.days)),
    ]

    @Test(arguments: parsed)
    func parses(_ testCase: (words: [String], command: Command)) throws {
        #expect(try CommandParser.parse(testCase.words).command == testCase.command)
    }

    @Test func globalOptionsStandAnywhere() throws {
        let invocation = try CommandParser.parse(["days", "--state-dir", "/s", "--config=/c"])
        #expect(invocation.globals == GlobalOptions(configPath: "/c", stateDirectory: "/s"))
    }

    static let refused: [(words: [String], error: CommandLineError)] = [
        (["frobnicate"], CommandLineError("unknown command frobnicate")),
        (["interfaces", "--colour"], CommandLineError("unknown option --colour", command: .interfaces)),
        (["interfaces", "extra"], CommandLineError("unexpected argument extra", command: .interfaces)),
        (["--config"], CommandLineError("--config needs a value")),
        (["export", "--json"], CommandLineError("export does not take --json", command: .export)),
        (["graph", "--svg", "x", "--json"], CommandLineError("graph does not take --json", command: .graph)),
        (["events", "--si"], CommandLineError("events does not take --si", command: .events)),
        (["days", "--limit", "1", "--limit", "2"], CommandLineError("--limit given more than once", command: .days)),
        (["interfaces", "--all=yes"], CommandLineError("--all takes no value", command: .interfaces)),
        (["days", "--limit", "zero"], CommandLineError("--limit zero: expected a whole number from 1 to 1000000", command: .days)),
        (["graph"], CommandLineError("graph needs --svg FILE", command: .graph)),
    ]

    @Test(arguments: refused)
    func refuses(_ testCase: (words: [String], error: CommandLineError)) {
        #expect(throws: testCase.error) { try CommandParser.parse(testCase.words) }
    }

    /// What completion generators rely on: an option takes a value in every
    /// command or in none, and every command has help naming each option.
    @Test func theTableIsConsistent() {
        let all = OptionSpec.global + CommandName.allCases.flatMap(\.options)
        for name in Set(all.flatMap(\.names)) {
            #expect(Set(all.filter { $0.names.contains(name) }.map(\.takesValue)).count == 1, "\(name)")
        }
        for command in CommandName.allCases {
            #expect(command.help.hasPrefix("Usage: ifmeter \(command.rawValue)"))
            for option in command.options + OptionSpec.global {
                #expect(command.help.contains(option.name), "\(command) \(option.name)")
            }
            #expect(CommandName.overview.contains("  \(command.rawValue) "))
        }
    }

    /// Every option of every command parses with a sample value: none is in
    /// the table without being read.
    @Test func everyOptionOfEveryCommandParses() throws {
        for command in CommandName.allCases {
            for option in command.options where option != .help {
                var words = [command.rawValue] + (command == .graph && option != .svg ? ["--svg", "x"] : [])
                words.append(option.name)
                if option.takesValue { words.append(option.choices.first ?? (option.value == "DATE" ? "2026-01-01" : option.value == "SECONDS" ? "1" : option.value == "N" ? "1" : "x")) }
                #expect(throws: Never.self, "\(words)") { try CommandParser.parse(words) }
            }
        }
    }
}

/// `make run`, then `ifmeter`: the reader finds the store make run keeps.
@Suite struct StoreLocationTests {
    static let cases: [(stores: Set<String>, cwd: String?, exe: String?, expected: String)] = [
        (["/var/lib/ifmeter", "/src/ifmeter/state"], "/src/ifmeter", "/src/ifmeter/.build/debug/ifmeter", "/var/lib/ifmeter"),
        (["/src/ifmeter/state"], "/src/ifmeter", "/usr/local/bin/ifmeter", "/src/ifmeter/state"),
        (["/src/ifmeter/state"], "/home/me", "/src/ifmeter/.build/x86_64-unknown-linux-gnu/debug/ifmeter", "/src/ifmeter/state"),
        ([], "/src/ifmeter", "/src/ifmeter/.build/debug/ifmeter", "/var/lib/ifmeter"),
        (["/home/me/state"], nil, nil, "/var/lib/ifmeter"),
    ]

    @Test(arguments: cases)
    func fallback(_ testCase: (stores: Set<String>, cwd: String?, exe: String?, expected: String)) {
        let found = StoreLocation.fallback(
            default: "/var/lib/ifmeter", workingDirectory: testCase.cwd, executable: testCase.exe, hasStore: testCase.stores.contains)
        #expect(found == testCase.expected)
    }
}
