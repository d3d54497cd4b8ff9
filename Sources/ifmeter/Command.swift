// No IfmeterCore import when `make fuzz` compiles the parser with the few core sources it needs.
import Glibc
#if canImport(IfmeterCore)
import IfmeterCore
#endif

/// A command-line mistake: exit 64 with the message and a hint naming the command's help.
struct CommandLineError: Error, Sendable, Equatable {
    var message: String
    var command: CommandName?
    /// Whether the line ends pointing at the command's help; not when the message names what to run next.
    var pointsToHelp: Bool

    init(_ message: String, command: CommandName? = nil, pointsToHelp: Bool = true) {
        self.message = message
        self.command = command
        self.pointsToHelp = pointsToHelp
    }
}

struct GlobalOptions: Sendable, Equatable {
    var configPath: String?
    var stateDirectory: String?
    /// --utc: times shown in UTC (the commands that show times take it).
    var utc = false
}

/// How to print: the unit options given override `[Display]` of ifmeter.conf, each on its own.
struct DisplayOptions: Sendable, Equatable {
    var json = false
    /// --iec, --si or --bytes; nil: Units= of the configuration.
    var scale: Units.Scale?
    /// --bit-rates or --byte-rates; nil: RateUnit= of the configuration.
    var ratesInBits: Bool?

    func units(over defaults: Units) -> Units {
        Units(scale: scale ?? defaults.scale, ratesInBits: ratesInBits ?? defaults.ratesInBits)
    }
}

/// `--begin` and `--end` as written; they become moments only when run, in the zone the store's buckets follow.
struct TimeRange: Sendable, Equatable {
    var begin: String?
    var end: String?

    /// [from, to): from the moment named, to the end of the day or minute named.
    var bounds: (from: Int64, to: Int64) {
        var from = Int64.min, to = Int64.max
        if let begin, let time = Self.moment(begin) { from = time }
        if let end, let time = Self.moment(end) {
            to = end.contains(":") ? time + 60 : TimeBuckets.start(of: .day, -1, before: time)
        }
        return (from, to)
    }
}

extension TimeRange {
    /// A date as --begin and --end take it, or vnStat's `today` and `yesterday` (local midnight).
    static func moment(_ text: String) -> Int64? {
        let now = Int64(time(nil))
        switch text {
        case "today": return TimeBuckets.start(of: .day, containing: now)
        case "yesterday": return TimeBuckets.start(of: .day, 1, before: now)
        default: return TimeText.parse(text)
        }
    }
}

enum ExportFormat: String, Sendable, CaseIterable { case csv, jsonl }

/// How `status` prints: a line per interface, the detail of those named with -i, or fields for scripts.
enum StatusLayout: Sendable, Equatable { case summary, detail, oneline }

/// What the command line asks for, validated before anything is read: the run step never sees its words.
enum Command: Sendable, Equatable {
    case help(CommandName?)
    case version
    case completions(Shell)
    /// An interface's name as the store keeps it (InterfaceName's encoding).
    case edit(StoreEdit)
    /// `import vnstat FILE`: the names chosen (none: all), vnStat's configuration.
    case importVnStat(file: String, names: [String], vnstatConfig: String)
    case status(InterfaceSelection, StatusLayout, DisplayOptions, all: Bool)
    case history(CommandName, InterfaceSelection, limit: Int?, TimeRange, DisplayOptions)
    case classes(DisplayOptions)
    /// A budget from the command line (`--limit`) instead of [Budgets]; `quiet`: print only when one is not ok.
    case check(Budget?, DisplayOptions, quiet: Bool)
    case events(InterfaceSelection, limit: Int, json: Bool)
    case live(InterfaceSelection, interval: Double, count: Int?, DisplayOptions, all: Bool)
    case export(InterfaceSelection, ExportFormat, Granularity, TimeRange)
    case graph(InterfaceSelection, GraphKind, path: String, GraphFormat, GraphStyle, Units, days: Int)
    case interfaces(all: Bool, DisplayOptions)
}

struct Invocation: Sendable, Equatable {
    var globals: GlobalOptions
    var command: Command
}

/// Parses the words after the program name. Pure (no file, clock or environment): fuzzed and table-tested.
enum CommandParser {
    static func parse(_ words: [String]) throws(CommandLineError) -> Invocation {
        var command: CommandName?
        var operands: [String] = []
        var given: [(spec: OptionSpec, spelled: String, value: String?)] = []
        let known = OptionSpec.global + OptionSpec.leading + CommandName.allCases.flatMap(\.options)
        var index = 0
        // After `--` every word is an operand: an interface may be named `-x`.
        var optionsEnded = false
        while index < words.count {
            let word = words[index]
            index += 1
            if word == "--" && !optionsEnded {
                optionsEnded = true
                continue
            }
            // vnStat's short forms name a view: `ifmeter -d wlan0` is `ifmeter days -i wlan0`. Its -h
            // (hours) too, as the first word with no command after it: elsewhere -h is help.
            let vnstatHours = word == "-h" && index == 1 && !words.contains { $0 == "help" || CommandName(rawValue: $0) != nil }
            if command == nil && !optionsEnded, let name = vnstatHours ? .hours : Self.vnstatViews[word] {
                command = name
                continue
            }
            guard !optionsEnded && word.hasPrefix("-") && word != "-" else {
                if command == nil {
                    // `help [COMMAND]`, as git and swift-argument-parser take it.
                    if word == "help" { return Invocation(globals: GlobalOptions(), command: .help(try helpTopic(words[index...]))) }
                    if let name = CommandName(rawValue: word) {
                        command = name
                    } else if operands.isEmpty && !optionsEnded && !Self.looksLikeAnInterface(word) {
                        throw CommandLineError("unknown command \(word)")
                    } else {
                        // `ifmeter wlan0`: an interface, as vnStat takes it.
                        operands.append(word)
                    }
                } else {
                    operands.append(word)
                }
                continue
            }
            var spelled = word
            var inline: String?
            if word.hasPrefix("--"), let equals = word.firstIndex(of: "=") {
                spelled = String(word[..<equals])
                inline = String(word[word.index(after: equals)...])
            }
            guard let spec = known.first(where: { $0.names.contains(spelled) }) else {
                throw CommandLineError("unknown option \(word)", command: command)
            }
            if spec.takesValue {
                if inline == nil {
                    guard index < words.count else { throw CommandLineError("\(spelled) needs a value", command: command) }
                    inline = words[index]
                    index += 1
                }
                // No option means anything by an empty value: a variable expanded to nothing (`--state-dir "$DIR"`).
                if inline == "" { throw CommandLineError("\(spelled) needs a value, not an empty one", command: command) }
            } else if inline != nil {
                throw CommandLineError("\(spelled) takes no value", command: command)
            }
            given.append((spec, spelled, inline))
        }
        if given.contains(where: { $0.spec == .help }) { return Invocation(globals: GlobalOptions(), command: .help(command)) }
        if given.contains(where: { $0.spec == .version }) {
            if let command { throw CommandLineError("\(command.rawValue) does not take --version", command: command) }
            return Invocation(globals: GlobalOptions(), command: .version)
        }
        let name = command ?? .fallback
        // The same spelling may mean a different option per command (--all).
        let accepted = OptionSpec.global + name.options
        var resolved: [(OptionSpec, String)] = []
        for option in given {
            guard let spec = accepted.first(where: { $0.names.contains(option.spelled) }) else {
                throw CommandLineError("\(name.rawValue) does not take \(option.spelled)", command: name)
            }
            resolved.append((spec, option.value ?? ""))
        }
        var options = GivenOptions(command: name, given: resolved)
        let globals = GlobalOptions(
            configPath: try options.single(.config), stateDirectory: try options.single(.stateDirectory), utc: options.flag(.utc))
        return Invocation(globals: globals, command: try build(name, operands: operands, &options))
    }

    /// vnStat's view options, each the ifmeter command of the same view (its -h: see `parse`).
    static let vnstatViews: [String: CommandName] = [
        "-5": .fiveminutes, "-d": .days, "-m": .months, "-y": .years, "-t": .top, "-l": .live,
    ]

    /// A word that may name an interface rather than a mistyped command: a kernel name has a digit
    /// or a separator (wlan0, wg-home, br.10); a plain word is more likely a command spelt wrong.
    static func looksLikeAnInterface(_ word: String) -> Bool {
        word.contains { $0.isNumber || $0 == "-" || $0 == "." || $0 == "_" || $0 == "+" }
    }

    /// The command `help` is asked about: none, or one by name.
    private static func helpTopic(_ rest: ArraySlice<String>) throws(CommandLineError) -> CommandName? {
        guard let topic = rest.first else { return nil }
        guard let name = CommandName(rawValue: topic) else { throw CommandLineError("help: unknown command \(topic)") }
        if let extra = rest.dropFirst().first { throw CommandLineError("help takes one command, not also \(extra)") }
        return name
    }

    private static func build(_ name: CommandName, operands: [String], _ options: inout GivenOptions) throws(CommandLineError) -> Command {
        var operands = operands[...]
        var operand = ""
        if let spec = name.operand {
            guard let word = operands.popFirst() else { throw CommandLineError("\(name.rawValue) needs \(spec.value): \(spec.help)", command: name) }
            operand = word
        }
        var second = ""
        if name == .rename || name == .merge, let spec = name.operand {
            guard let word = operands.popFirst() else { throw CommandLineError("\(name.rawValue) needs \(spec.value): \(spec.help)", command: name) }
            second = word
        }
        var file = ""
        if name == .importHistory {
            guard operand == "vnstat" else { throw CommandLineError("import \(operand): the one source ifmeter imports is vnstat (import vnstat FILE)", command: name) }
            guard let word = operands.popFirst() else { throw CommandLineError("import vnstat needs FILE: vnStat's database (/var/lib/vnstat/vnstat.db)", command: name) }
            file = word
        }
        // A bare word names an interface (vnStat's `-d wlan0`); a bare number is the limit (`days 7`).
        if name.options.contains(.interface) {
            for word in operands {
                let isLimit = name.options.contains(.limit) && Int(word) != nil && !options.flag(.limit)
                options.given.append((isLimit ? .limit : .interface, word))
            }
            operands = []
        }
        if let operand = operands.first {
            throw CommandLineError("unexpected argument \(operand)", command: name)
        }
        switch name {
        case .status:
            if options.flag(.oneline) && options.flag(.json) { throw CommandLineError("--oneline and --json exclude each other", command: name) }
            let layout: StatusLayout = options.flag(.oneline) ? .oneline : options.flag(.interface) ? .detail : .summary
            return .status(try options.selection(), layout, try options.display(), all: options.flag(.allInterfaces))
        case .fiveminutes, .hours, .days, .months, .years, .top:
            return .history(name, try options.selection(), limit: try options.number(.limit), try options.range(), try options.display())
        case .classes:
            return .classes(try options.display())
        case .check:
            return .check(try options.budget(), try options.display(), quiet: options.flag(.quiet))
        case .events:
            return .events(try options.selection(), limit: try options.number(.limit) ?? 50, json: options.flag(.json))
        case .live:
            return .live(
                try options.selection(), interval: try options.seconds(.interval) ?? 1, count: try options.number(.count), try options.display(),
                all: options.flag(.allLinks))
        case .export:
            let format = try options.choice(.format, ExportFormat.self, expected: "csv or jsonl") ?? .csv
            let granularity = try options.choice(.granularity, Granularity.self, expected: "5min, hour, day, month or year") ?? .day
            return .export(try options.selection(), format, granularity, try options.range())
        case .graph:
            let output = try options.single(.output)
            let svg = try options.single(.svg)
            if output != nil && svg != nil { throw CommandLineError("-o and --svg exclude each other: -o FILE.png for a PNG, -o FILE.svg for an SVG", command: name) }
            guard let path = output ?? svg else { throw CommandLineError("graph needs -o FILE (FILE.png for a PNG) or --svg FILE", command: name) }
            if svg != nil && options.flag(.png) { throw CommandLineError("--svg and --png exclude each other: -o FILE --png", command: name) }
            let kind = try options.choice(.kind, GraphKind.self, expected: GraphKind.listed) ?? .daily
            var days = 30
            if let text = try options.single(.days) {
                guard kind == .daily else { throw CommandLineError("--days applies to --kind daily only", command: name) }
                // Bounded: the picture grows with the days asked for.
                guard let value = Int(text), (1...GraphKind.maximumDays).contains(value) else {
                    throw CommandLineError("--days \(text): expected a whole number from 1 to \(GraphKind.maximumDays)", command: name)
                }
                days = value
            }
            let format = svg != nil ? GraphFormat.svg : GraphFormat.chosen(path: path, png: options.flag(.png))
            return .graph(
                try options.selection(), kind, path: path, format, options.flag(.dark) ? .dark : .light, Units(scale: options.flag(.si) ? .si : .iec),
                days: days)
        case .interfaces:
            return .interfaces(all: options.flag(.all), try options.display())
        case .forget:
            guard options.flag(.force) else {
                throw CommandLineError("forget removes every record of \(operand); add --force to remove them", command: name)
            }
            return .edit(.forget(InterfaceName.fromUser(operand)))
        case .watch: return .edit(.watch(InterfaceName.fromUser(operand)))
        case .unwatch: return .edit(.unwatch(InterfaceName.fromUser(operand)))
        case .rename: return .edit(.rename(InterfaceName.fromUser(operand), to: InterfaceName.fromUser(second)))
        case .merge: return .edit(.merge(InterfaceName.fromUser(operand), into: InterfaceName.fromUser(second)))
        case .importHistory:
            let names = try options.selection().groups.flatMap { $0 }
            return .importVnStat(file: file, names: names, vnstatConfig: try options.single(.vnstatConfig) ?? "/etc/vnstat.conf")
        case .completions:
            guard let shell = Shell(rawValue: operand) else { throw CommandLineError("completions \(operand): expected bash, zsh or fish", command: name) }
            return .completions(shell)
        }
    }
}

/// The options found on a command line, read by spec.
private struct GivenOptions {
    let command: CommandName
    var given: [(spec: OptionSpec, value: String)]

    init(command: CommandName, given: [(OptionSpec, String)]) {
        self.command = command
        self.given = given
    }

    func flag(_ spec: OptionSpec) -> Bool { given.contains { $0.spec == spec } }

    func all(_ spec: OptionSpec) -> [String] { given.filter { $0.spec == spec }.map(\.value) }

    /// The value of an option given at most once.
    func single(_ spec: OptionSpec) throws(CommandLineError) -> String? {
        let values = all(spec)
        if values.count > 1 { throw CommandLineError("\(spec.name) given more than once", command: command) }
        return values.first
    }

    func selection() throws(CommandLineError) -> InterfaceSelection {
        switch InterfaceSelection.parse(all(.interface)) {
        case .success(let selection): return selection
        case .failure(let error): throw CommandLineError("-i \(error.value): expected NAME, or NAME+NAME to merge", command: command)
        }
    }

    /// --bytes wins over --iec and --si (raw counts have no prefix); opposites given together are a mistake.
    func display() throws(CommandLineError) -> DisplayOptions {
        if flag(.iec) && flag(.si) { throw CommandLineError("--iec and --si exclude each other", command: command) }
        if flag(.bitRates) && flag(.byteRates) { throw CommandLineError("--bit-rates and --byte-rates exclude each other", command: command) }
        var display = DisplayOptions(json: flag(.json))
        if flag(.iec) { display.scale = .iec }
        if flag(.si) { display.scale = .si }
        if flag(.bytes) { display.scale = .raw }
        if flag(.bitRates) { display.ratesInBits = true }
        if flag(.byteRates) { display.ratesInBits = false }
        return display
    }

    func number(_ spec: OptionSpec) throws(CommandLineError) -> Int? {
        guard let text = try single(spec) else { return nil }
        // --limit 0 is every row, as vnStat reads it.
        let least = spec == .limit ? 0 : 1
        guard let value = Int(text), value >= least, value <= 1_000_000 else {
            throw CommandLineError("\(spec.name) \(text): expected a whole number from \(least) to 1000000", command: command)
        }
        return value
    }

    func seconds(_ spec: OptionSpec) throws(CommandLineError) -> Double? {
        guard let text = try single(spec) else { return nil }
        guard let value = Double(text), value >= 0.1, value <= 3600 else {
            throw CommandLineError("\(spec.name) \(text): expected seconds from 0.1 to 3600", command: command)
        }
        return value
    }

    func choice<Choice: RawRepresentable<String>>(_ spec: OptionSpec, _ type: Choice.Type, expected: String) throws(CommandLineError) -> Choice? {
        guard let text = try single(spec) else { return nil }
        guard let value = Choice(rawValue: text) else { throw CommandLineError("\(spec.name) \(text): expected \(expected)", command: command) }
        return value
    }

    /// `check --limit 5GB --per day --direction rx -i wwan0`: the terms of a [Budgets] line, as options.
    func budget() throws(CommandLineError) -> Budget? {
        let target = try single(.budgetTarget), period = try single(.per), direction = try single(.direction)
        guard let amount = try single(.budgetLimit) else {
            if let given = [(OptionSpec.budgetTarget, target), (.per, period), (.direction, direction)].first(where: { $0.1 != nil }) {
                throw CommandLineError("\(given.0.name) applies with --limit, the budget checked instead of [Budgets]", command: command)
            }
            return nil
        }
        guard let bytes = ConfigurationFile.byteAmount(amount), bytes > 0, let decimal = ConfigurationFile.isDecimalAmount(amount) else {
            throw CommandLineError("--limit \(amount): expected an amount like 5GB (1000-based) or 5GiB (1024-based)", command: command)
        }
        guard let target else { throw CommandLineError("--limit needs -i IFACE: the interface or class it limits", command: command) }
        if InterfaceClass(rawValue: target) == nil, let meant = ConfigurationFile.misspeltClass(target) {
            throw CommandLineError("-i \(target): not a class; did you mean \(meant.rawValue)? (an interface name has a digit, like wwan0)", command: command)
        }
        let named: Budget.Target
        do { named = try ConfigurationFile.budgetTarget(target).target } catch {
            throw CommandLineError("-i \(target): expected an interface or a class (\(InterfaceClass.spelledOut))", command: command)
        }
        return Budget(
            target: named, bytes: bytes, decimal: decimal,
            period: try choice(.per, BudgetPeriod.self, expected: "hour, day, month, cycle or year") ?? .cycle,
            direction: try choice(.direction, BudgetDirection.self, expected: "rx, tx or total") ?? .total)
    }

    func range() throws(CommandLineError) -> TimeRange {
        func text(_ spec: OptionSpec) throws(CommandLineError) -> String? {
            guard let text = try single(spec) else { return nil }
            guard TimeRange.moment(text) != nil else {
                throw CommandLineError("\(spec.name) \(text): expected YYYY-MM-DD, \"YYYY-MM-DD HH:MM\", today or yesterday", command: command)
            }
            return text
        }
        let range = TimeRange(begin: try text(.begin), end: try text(.end))
        let bounds = range.bounds
        if bounds.from >= bounds.to { throw CommandLineError("--begin must come before --end", command: command) }
        return range
    }
}
