import Glibc
import IfmeterTestSupport
import Testing
@testable import IfmeterCore
@testable import ifmeter

/// The command line as data: the pure parse, table-tested without a process.
@Suite struct CommandParserTests {
    static let parsed: [(words: [String], command: Command)] = [
        ([], .status([], .summary, DisplayOptions(), all: false)),
        (["--json"], .status([], .summary, DisplayOptions(json: true), all: false)),
        (["status", "--all", "--oneline"], .status([], .oneline, DisplayOptions(), all: true)),
        (["status", "-i", "wwan0", "--si"], .status(["wwan0"], .detail, DisplayOptions(scale: .si), all: false)),
        (["status", "-i", "wwan0+wlan0", "-i", "tun0"],
         .status(InterfaceSelection(groups: [["wwan0", "wlan0"], ["tun0"]]), .detail, DisplayOptions(), all: false)),
        (["--bytes", "days", "-i", "a", "--interface=b", "--limit", "3"],
         .history(.days, ["a", "b"], limit: 3, TimeRange(), DisplayOptions(scale: .raw))),
        (["events", "--limit=5", "--json", "-i", "x"], .events(["x"], limit: 5, json: true)),
        // '+' at an end or doubled merges nothing: one name, as Linux allows.
        (["days", "-i", "a+"], .history(.days, ["a+"], limit: nil, TimeRange(), DisplayOptions())),
        (["days", "-i", "+", "-i", "+x", "-i", "a++b"], .history(.days, ["+", "+x", "a++b"], limit: nil, TimeRange(), DisplayOptions())),
        (["live", "--interval", "0.5", "--count", "2", "--byte-rates", "-i", "a+b"],
         .live(InterfaceSelection(groups: [["a", "b"]]), interval: 0.5, count: 2, DisplayOptions(ratesInBits: false), all: false)),
        (["live", "--all", "--count", "1"], .live([], interval: 1, count: 1, DisplayOptions(), all: true)),
        (["export", "--format", "jsonl", "--granularity", "5min", "-i", "tun0"], .export(["tun0"], .jsonl, .fiveMinutes, TimeRange())),
        (["graph", "--svg", "-", "--days", "7"], .graph([], .daily, path: "-", .svg, .light, Units(), days: 7)),
        (["graph", "--svg", "g.svg", "--kind", "top", "-i", "wwan0"], .graph(["wwan0"], .top, path: "g.svg", .svg, .light, Units(), days: 30)),
        (["graph", "--svg", "-", "--days", "3660"], .graph([], .daily, path: "-", .svg, .light, Units(), days: 3660)),
        // vnstati's -o: the name's extension chooses PNG; --png for any name, standard output too.
        (["graph", "-o", "traffic.png"], .graph([], .daily, path: "traffic.png", .png, .light, Units(), days: 30)),
        (["graph", "--output", "Traffic.PNG", "--kind", "fiveminute"], .graph([], .fiveminute, path: "Traffic.PNG", .png, .light, Units(), days: 30)),
        (["graph", "-o", "traffic.svg", "--kind", "yearly", "--dark"], .graph([], .yearly, path: "traffic.svg", .svg, .dark, Units(), days: 30)),
        (["graph", "-o", "-", "--png", "--si"], .graph([], .daily, path: "-", .png, .light, Units(scale: .si), days: 30)),
        (["graph", "-o", "picture", "--png"], .graph([], .daily, path: "picture", .png, .light, Units(), days: 30)),
        (["graph", "--svg", "traffic.png"], .graph([], .daily, path: "traffic.png", .svg, .light, Units(), days: 30)),
        (["fiveminutes", "-i", "wwan0", "--limit", "12"], .history(.fiveminutes, ["wwan0"], limit: 12, TimeRange(), DisplayOptions())),
        // vnStat's habits: a bare interface, a bare number as the limit, the short view forms, --limit 0.
        (["days", "7"], .history(.days, [], limit: 7, TimeRange(), DisplayOptions())),
        (["-d", "wlan0"], .history(.days, ["wlan0"], limit: nil, TimeRange(), DisplayOptions())),
        (["wlan0"], .status(["wlan0"], .detail, DisplayOptions(), all: false)),
        (["wlan0", "-m"], .history(.months, ["wlan0"], limit: nil, TimeRange(), DisplayOptions())),
        (["-5", "-i", "wwan0"], .history(.fiveminutes, ["wwan0"], limit: nil, TimeRange(), DisplayOptions())),
        (["-y"], .history(.years, [], limit: nil, TimeRange(), DisplayOptions())),
        (["-t", "wwan0", "3"], .history(.top, ["wwan0"], limit: 3, TimeRange(), DisplayOptions())),
        (["top", "--limit", "0"], .history(.top, [], limit: 0, TimeRange(), DisplayOptions())),
        (["days", "--begin", "yesterday", "--end", "today"], .history(.days, [], limit: nil, TimeRange(begin: "yesterday", end: "today"), DisplayOptions())),
        (["days", "--", "-x", "2"], .history(.days, ["-x"], limit: 2, TimeRange(), DisplayOptions())),
        (["interfaces", "--all"], .interfaces(all: true, DisplayOptions())),
        (["interfaces", "--si", "--json"], .interfaces(all: false, DisplayOptions(json: true, scale: .si))),
        // Back to the defaults whatever [Display] says; --bytes wins over a prefix.
        (["days", "--iec", "--bit-rates"], .history(.days, [], limit: nil, TimeRange(), DisplayOptions(scale: .iec, ratesInBits: true))),
        (["status", "--si", "--bytes"], .status([], .summary, DisplayOptions(scale: .raw), all: false)),
        (["check", "--help"], .help(.check)),
        (["check"], .check(nil, DisplayOptions(), quiet: false)),
        (["check", "--quiet", "--json"], .check(nil, DisplayOptions(json: true), quiet: true)),
        // vnstat --alert's terms as options: the budget checked instead of [Budgets].
        (["check", "--limit", "5GB", "--per", "day", "--direction", "rx", "-i", "wwan0"],
         .check(Budget(target: .interface("wwan0"), bytes: 5_000_000_000, decimal: true, period: .day, direction: .rx), DisplayOptions(), quiet: false)),
        (["check", "--limit=2GiB", "--interface=cellular"],
         .check(Budget(target: .interfaceClass(.cellular), bytes: 2_147_483_648, decimal: false), DisplayOptions(), quiet: false)),
        (["check", "-i", "tun0", "--limit", "100MB", "--per", "hour", "--direction", "tx", "--bytes"],
         .check(Budget(target: .interface("tun0"), bytes: 100_000_000, decimal: true, period: .hour, direction: .tx),
                DisplayOptions(scale: .raw), quiet: false)),
        (["check", "--limit", "1T", "-i", "wlan0", "--per", "year"],
         .check(Budget(target: .interface("wlan0"), bytes: 1_000_000_000_000, decimal: true, period: .year), DisplayOptions(), quiet: false)),
        (["--help"], .help(nil)),
        (["-h", "days", "--limit", "2"], .help(.days)),
        // vnStat's -h is its hours view, as the first word with no command named.
        (["-h"], .history(.hours, [], limit: nil, TimeRange(), DisplayOptions())),
        (["-h", "wlan0", "--json"], .history(.hours, ["wlan0"], limit: nil, TimeRange(), DisplayOptions(json: true))),
        (["days", "-h"], .help(.days)),
        (["--config", "/c", "-h"], .help(nil)),
        (["--version"], .version),
        (["--config", "/c", "--version"], .version),
        (["completions", "zsh"], .completions(.zsh)),
        (["completions", "--help"], .help(.completions)),
        (["help"], .help(nil)),
        (["help", "status"], .help(.status)),
        (["--config", "/c", "help", "days"], .help(.days)),
        // `--` ends the options: a name that starts with a dash can be forgotten.
        (["forget", "--force", "--", "-x"], .edit(.forget("-x"))),
        (["--state-dir", "/s", "--force", "--", "forget", "--help"], .edit(.forget("--help"))),
        (["forget", "tun0", "--force", "--"], .edit(.forget("tun0"))),
        // vnStat's --add, --delete, --rename; and merge.
        (["watch", "eth0"], .edit(.watch("eth0"))),
        (["unwatch", "eth0"], .edit(.unwatch("eth0"))),
        (["rename", "wwan0", "wwp0s20u4"], .edit(.rename("wwan0", to: "wwp0s20u4"))),
        (["merge", "tun0", "wg0"], .edit(.merge("tun0", into: "wg0"))),
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
        (["help", "frobnicate"], CommandLineError("help: unknown command frobnicate")),
        (["help", "days", "hours"], CommandLineError("help takes one command, not also hours")),
        (["interfaces", "--colour"], CommandLineError("unknown option --colour", command: .interfaces)),
        (["interfaces", "extra"], CommandLineError("unexpected argument extra", command: .interfaces)),
        (["--config"], CommandLineError("--config needs a value")),
        (["--state-dir", "", "status"], CommandLineError("--state-dir needs a value, not an empty one")),
        (["graph", "--svg="], CommandLineError("--svg needs a value, not an empty one", command: .graph)),
        (["export", "--json"], CommandLineError("export does not take --json", command: .export)),
        (["graph", "--svg", "x", "--json"], CommandLineError("graph does not take --json", command: .graph)),
        (["events", "--si"], CommandLineError("events does not take --si", command: .events)),
        (["days", "--limit", "1", "--limit", "2"], CommandLineError("--limit given more than once", command: .days)),
        (["interfaces", "--all=yes"], CommandLineError("--all takes no value", command: .interfaces)),
        (["days", "--limit", "zero"], CommandLineError("--limit zero: expected a whole number from 0 to 1000000", command: .days)),
        (["graph"], CommandLineError("graph needs -o FILE (FILE.png for a PNG) or --svg FILE", command: .graph)),
        (["graph", "-o", "a.png", "--svg", "b.svg"],
         CommandLineError("-o and --svg exclude each other: -o FILE.png for a PNG, -o FILE.svg for an SVG", command: .graph)),
        (["graph", "--svg", "b.svg", "--png"], CommandLineError("--svg and --png exclude each other: -o FILE --png", command: .graph)),
        (["graph", "--svg", "-", "--days", "3661"], CommandLineError("--days 3661: expected a whole number from 1 to 3660", command: .graph)),
        (["graph", "--svg", "-", "--days", "1000000"], CommandLineError("--days 1000000: expected a whole number from 1 to 3660", command: .graph)),
        (["graph", "--svg", "-", "--days", "0"], CommandLineError("--days 0: expected a whole number from 1 to 3660", command: .graph)),
        (["graph", "--svg", "-", "--kind", "hourly", "--days", "2"], CommandLineError("--days applies to --kind daily only", command: .graph)),
        (["graph", "--svg", "-", "--kind", "weekly"], CommandLineError("--kind weekly: expected summary, fiveminute, hourly, daily, monthly, yearly or top", command: .graph)),
        (["days", "--begin", "2026-02-30"], CommandLineError("--begin 2026-02-30: expected YYYY-MM-DD, \"YYYY-MM-DD HH:MM\", today or yesterday", command: .days)),
        (["days", "--begin", "99999-01-01"], CommandLineError("--begin 99999-01-01: expected YYYY-MM-DD, \"YYYY-MM-DD HH:MM\", today or yesterday", command: .days)),
        (["days", "--end", "2026-13-01"], CommandLineError("--end 2026-13-01: expected YYYY-MM-DD, \"YYYY-MM-DD HH:MM\", today or yesterday", command: .days)),
        (["status", "--oneline", "--json"], CommandLineError("--oneline and --json exclude each other", command: .status)),
        (["days", "--si", "--iec"], CommandLineError("--iec and --si exclude each other", command: .days)),
        (["live", "--byte-rates", "--bit-rates"], CommandLineError("--bit-rates and --byte-rates exclude each other", command: .live)),
        (["interfaces", "--byte-rates"], CommandLineError("interfaces does not take --byte-rates", command: .interfaces)),
        (["interfaces", "--utc"], CommandLineError("interfaces does not take --utc", command: .interfaces)),
        (["days", "--version"], CommandLineError("days does not take --version", command: .days)),
        (["--version=1"], CommandLineError("--version takes no value")),
        (["completions"], CommandLineError("completions needs SHELL: bash, zsh or fish", command: .completions)),
        (["completions", "tcsh"], CommandLineError("completions tcsh: expected bash, zsh or fish", command: .completions)),
        (["completions", "bash", "zsh"], CommandLineError("unexpected argument zsh", command: .completions)),
        (["completions", "bash", "--json"], CommandLineError("completions does not take --json", command: .completions)),
        (["forget", "--force", "--", "-x", "--", "-y"], CommandLineError("unexpected argument --", command: .forget)),
        (["forget", "tun0"], CommandLineError("forget removes every record of tun0; add --force to remove them", command: .forget)),
        (["rename", "tun0"], CommandLineError("rename needs OLD NEW: the name whose history moves, and its new name", command: .rename)),
        (["merge", "a0", "b0", "c0"], CommandLineError("unexpected argument c0", command: .merge)),
        (["dasy"], CommandLineError("unknown command dasy")),
        (["days", "--limit", "-1"], CommandLineError("--limit -1: expected a whole number from 0 to 1000000", command: .days)),
        (["check", "--limit", "5GB"], CommandLineError("--limit needs -i IFACE: the interface or class it limits", command: .check)),
        (["check", "--limit", "lots", "-i", "wwan0"], CommandLineError("--limit lots: expected an amount like 5GB (1000-based) or 5GiB (1024-based)", command: .check)),
        (["check", "--limit", "0", "-i", "wwan0"], CommandLineError("--limit 0: expected an amount like 5GB (1000-based) or 5GiB (1024-based)", command: .check)),
        (["check", "--limit", "5GB", "-i", "wwan0", "--per", "week"], CommandLineError("--per week: expected hour, day, month, cycle or year", command: .check)),
        (["check", "--limit", "5GB", "-i", "wwan0", "--direction", "in"], CommandLineError("--direction in: expected rx, tx or total", command: .check)),
        (["check", "--per", "day"], CommandLineError("--per applies with --limit, the budget checked instead of [Budgets]", command: .check)),
        (["check", "-i", "wwan0"], CommandLineError("-i applies with --limit, the budget checked instead of [Budgets]", command: .check)),
        (["check", "--limit", "5GB", "-i", "celular"],
         CommandLineError("-i celular: not a class; did you mean cellular? (an interface name has a digit, like wwan0)", command: .check)),
        (["check", "--limit", "5GB", "-i", "wwan*"], CommandLineError("-i wwan*: expected an interface or a class (wifi cellular tunnel wired other)", command: .check)),
        (["check", "--limit", "5GB", "-i", "a", "-i", "b"], CommandLineError("-i given more than once", command: .check)),
        (["check", "wwan0"], CommandLineError("unexpected argument wwan0", command: .check)),
    ]

    /// `-i` by alias, as vnStat's -i takes one; a real name wins over an alias spelt the same.
    @Test(arguments: [
        ([["phone"]], [["wwan0"]]), ([["phone", "tun0"]], [["wwan0", "tun0"]]), ([["tun0"]], [["tun0"]]), ([["wg0"]], [["wg0"]]),
    ])
    func anAliasNamesItsInterface(_ given: [[String]], _ resolved: [[String]]) {
        let aliases = ["wwan0": "phone", "wg0": "tun0"]
        #expect(InterfaceSelection(groups: given).resolvingAliases(aliases, among: ["wwan0", "tun0", "wg0"]).groups == resolved)
    }

    /// vnStat's words for --begin and --end: local midnights, the day named included.
    @Test func todayAndYesterdayAreLocalDays() {
        let now = Int64(time(nil))
        let bounds = TimeRange(begin: "yesterday", end: "today").bounds
        #expect(bounds.from == TimeBuckets.start(of: .day, 1, before: now))
        #expect(bounds.to == TimeBuckets.start(of: .day, -1, before: now))
    }

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
            #expect(CommandName.overview.contains("  \(command.rawValue) ") == !command.hidden)
        }
    }

    /// Every option of every command parses with a sample value: none is in
    /// the table without being read.
    @Test func everyOptionOfEveryCommandParses() throws {
        for command in CommandName.allCases {
            for option in command.options where option != .help {
                var words = [command.rawValue] + (command == .graph && option != .svg && option != .output ? ["-o", "x"] : [])
                    + (command == .importHistory ? ["vnstat", "x"] : [])
                    + (command == .forget ? ["x", "--force"] : [])
                    // check's budget options come together: --limit names its target.
                    + (command == .check && option != .budgetLimit ? ["--limit", "5GB"] : [])
                    + (command == .check && option != .budgetTarget ? ["-i", "wwan0"] : [])
                words.append(option.name)
                if option.takesValue {
                    words.append(option.choices.first ?? (option.value == "DATE" ? "2026-01-01" : option.value == "SECONDS" || option.value == "N" ? "1" : option.value == "AMOUNT" ? "5GB" : "x"))
                }
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

/// One selection everywhere: names, merges, and the order names are shown in.
@Suite struct InterfaceSelectionTests {
    static func row(_ name: String, _ start: Int64, _ rx: UInt64, _ interfaceClass: String = "cellular") -> HistoryRow {
        HistoryRow(name: name, interfaceClass: interfaceClass, start: start, counters: LinkCounters(rxBytes: rx), live: false, incomplete: nil, estimated: nil)
    }

    /// Linux allows `+` in a name: `-i p+q` is the interface p+q where one
    /// is known, and a merge of p and q otherwise.
    @Test(arguments: [
        (["p+q"], ["p", "q", "p+q"], [["p+q"]]),
        (["p+q"], ["p", "q"], [["p", "q"]]),
        (["p+q+r", "a"], ["p+q+r", "a"], [["p+q+r"], ["a"]]),
        (["p+q+r"], ["p+q", "r"], [["p", "q", "r"]]),
    ])
    func aNameWithAPlusIsThatInterfaceWhereOneIsKnown(_ values: [String], _ known: [String], _ groups: [[String]]) throws {
        let selection = try InterfaceSelection.parse(values).get()
        #expect(selection.resolvingNames(among: known).groups == groups)
    }

    /// The history views list names as status does: tun2 before tun10.
    @Test func historyRowsAreInNaturalOrder() {
        let buckets = ["tun10", "tun2", "a"].map {
            StoredBucket(name: $0, interfaceClass: "tunnel", granularity: .day, start: 86_400, counters: LinkCounters(rxBytes: 1))
        }
        let rows = HistoryReport.rows(.days, buckets: buckets, live: [:], classes: [:], now: 10 * 86_400, names: [], from: .min, to: .max, limit: 10)
        #expect(rows.map(\.name) == ["a", "tun2", "tun10"])
    }

    @Test func mergesSumPerBucketAndKeepSingles() {
        let rows = [Self.row("a", 0, 1), Self.row("b", 0, 2), Self.row("c", 0, 4, "tunnel"), Self.row("a", 60, 8)]
        let merged = InterfaceSelection(groups: [["a", "b"], ["c"]]).apply(rows)
        #expect(merged.map(\.name) == ["a+b", "c", "a+b"])
        #expect(merged.map(\.counters.rxBytes) == [3, 4, 8])
        // A name both alone and in a merge appears under both labels.
        let both = InterfaceSelection(groups: [["a"], ["a", "c"]]).apply(rows)
        #expect(both.map(\.name) == ["a", "a+c", "a", "a+c"])
        #expect(both.filter { $0.name == "a+c" }.map(\.counters.rxBytes) == [5, 8])
        #expect(both.filter { $0.name == "a+c" }.first?.interfaceClass == "mixed")
        #expect(InterfaceSelection(groups: []).apply(rows).count == 4)
    }

    @Test func unknownNamesAreFound() {
        let selection = InterfaceSelection(groups: [["wwan0", "wlan0"], ["tun9"]])
        #expect(selection.unknown(among: ["wwan0", "wlan0", "tun0"]) == "tun9")
        #expect(InterfaceSelection(groups: [["wwan0"]]).unknown(among: ["wwan0"]) == nil)
    }

    static let order: [[String]] = [
        ["vpnx1", "vpnx2", "vpnx10"],
        ["eth0", "eth1", "eth01", "eth2"],
        ["a", "a1", "b"],
        ["tun2", "tun10", "tun10a", "wg0"],
    ]

    @Test(arguments: order)
    func naturalOrder(_ expected: [String]) {
        #expect(NaturalOrder.sorted(expected.reversed()) == expected)
        #expect(NaturalOrder.sorted(expected.shuffled()) == expected)
    }
}
