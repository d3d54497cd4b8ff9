// No IfmeterCore import when `make fuzz` compiles the parser with the few core sources it needs.
#if canImport(IfmeterCore)
import IfmeterCore
#endif

/// One option as spelled. The command table is the one source for parsing, help and shell completion.
struct OptionSpec: Sendable, Hashable {
    /// Spellings, the canonical one first (`-i`, `--interface`).
    let names: [String]
    /// The value's placeholder (`IFACE`); nil for a flag.
    let value: String?
    /// Words the value may be, for completion (`csv`, `jsonl`); empty when free.
    let choices: [String]
    let repeatable: Bool
    let help: String

    init(_ names: [String], value: String? = nil, choices: [String] = [], repeatable: Bool = false, _ help: String) {
        self.names = names
        self.value = value
        self.choices = choices
        self.repeatable = repeatable
        self.help = help
    }

    var takesValue: Bool { value != nil }
    var name: String { names[0] }

    /// `-i, --interface IFACE` and the help, a row of the help's option list.
    var heading: (String, String) { (names.joined(separator: ", ") + (value.map { " " + $0 } ?? ""), help) }

    /// `[-i IFACE]...`, or `--svg FILE` for an option its command requires.
    func usage(required: Bool = false) -> String {
        let body = value.map { "\(name) \($0)" } ?? name
        return required ? body : "[\(body)]" + (repeatable ? "..." : "")
    }

    static let stateDirectory = OptionSpec(
        ["--state-dir"], value: "DIR", "the daemon's state directory (default: StateDirectory= in the config, else $STATE_DIRECTORY, else /var/lib/ifmeter, else ./state as make run leaves it)")
    static let config = OptionSpec(["--config"], value: "FILE", "configuration (default /etc/ifmeter/ifmeter.conf, optional)")
    static let help = OptionSpec(["-h", "--help"], "this help")
    static let json = OptionSpec(["--json"], "machine-readable output (a versioned schema)")
    static let iec = OptionSpec(["--iec"], "1024-based units (KiB, MiB), whatever [Display] Units= says")
    static let si = OptionSpec(["--si"], "1000-based units (kB, MB) instead of KiB, MiB")
    static let bytes = OptionSpec(["--bytes"], "raw byte counts")
    static let bitRates = OptionSpec(["--bit-rates"], "rates in bits per second, whatever [Display] RateUnit= says")
    static let byteRates = OptionSpec(["--byte-rates"], "rates in bytes per second instead of bits per second")
    static let interface = OptionSpec(
        ["-i", "--interface"], value: "IFACE", repeatable: true, "only this interface (repeatable); a+b shows a and b merged into one")
    static let limit = OptionSpec(["--limit"], value: "N", "keep the latest N rows per interface, 0 all (events: the latest N in all; top: the N largest days in all)")
    static let begin = OptionSpec(["--begin"], value: "DATE", "from DATE: YYYY-MM-DD, \"YYYY-MM-DD HH:MM\", today or yesterday, local time")
    static let end = OptionSpec(["--end"], value: "DATE", "to DATE, the day named included")
    static let all = OptionSpec(["--all"], "every link: also the unwatched and ignored ones")
    static let interval = OptionSpec(["--interval"], value: "SECONDS", "seconds between refreshes (default 1)")
    static let count = OptionSpec(["--count"], value: "N", "stop after N refreshes")
    static let format = OptionSpec(["--format"], value: "FORMAT", choices: ["csv", "jsonl"], "csv (default) or jsonl")
    static let granularity = OptionSpec(
        ["--granularity"], value: "G", choices: Granularity.allCases.map(\.rawValue), "5min, hour, day (default), month or year")
    static let output = OptionSpec(["-o", "--output"], value: "FILE", "write the picture there: a PNG when FILE ends in .png, else an SVG; - is standard output")
    static let svg = OptionSpec(["--svg"], value: "FILE", "write an SVG there, whatever the name; - writes it to standard output")
    static let png = OptionSpec(["--png"], "with -o: a PNG whatever the name (rendered by rsvg-convert, package librsvg2-bin)")
    static let dark = OptionSpec(["--dark"], "light text and bars on a dark background")
    static let kind = OptionSpec(
        ["--kind"], value: "KIND", choices: GraphKind.allCases.map(\.rawValue),
        "summary, fiveminute (the last 48 hours), hourly (the last 24 hours), daily (default), monthly (the last 12 months), yearly (the last 10 years) or top (the 10 largest days)")
    static let days = OptionSpec(["--days"], value: "N", "with --kind daily: the last N days (default 30, at most 3660)")
    static let allInterfaces = OptionSpec(["--all"], "also interfaces that are gone")
    static let allLinks = OptionSpec(["--all"], "every link, also the unwatched ones (wired, other); never loopback")
    static let oneline = OptionSpec(["--oneline"], "one line per interface for scripts: fields separated by ;")
    static let vnstatConfig = OptionSpec(["--vnstat-config"], value: "FILE", "vnStat's configuration, for UseUTC and MonthRotate (default /etc/vnstat.conf)")
    static let utc = OptionSpec(["--utc"], "show times in UTC (buckets keep the zone the daemon counts in)")

    static let force = OptionSpec(["--force"], "remove the records: forget deletes data, so it asks for this")
    static let budgetLimit = OptionSpec(["--limit"], value: "AMOUNT", "check this budget instead of [Budgets]: 5GB (1000-based) or 5GiB (1024-based)")
    static let per = OptionSpec(
        ["--per"], value: "PERIOD", choices: BudgetPeriod.allCases.map(\.rawValue), "with --limit: hour, day, month, cycle (default, from BillingDay=) or year")
    static let direction = OptionSpec(
        ["--direction"], value: "DIR", choices: BudgetDirection.allCases.map(\.rawValue), "with --limit: rx, tx or total (default)")
    static let budgetTarget = OptionSpec(["-i", "--interface"], value: "IFACE", "with --limit: the interface, or the class (cellular, ...), it limits")
    static let quiet = OptionSpec(["--quiet"], "print nothing while every budget is ok: the exit status says it")

    static let version = OptionSpec(["--version"], "print the version and exit")

    /// Accepted before or after any command.
    static let global: [OptionSpec] = [stateDirectory, config, help]
    /// Accepted only when no command is named.
    static let leading: [OptionSpec] = [version]
    /// The defaults of all five are [Display] in ifmeter.conf.
    static let units: [OptionSpec] = [iec, si, bytes, bitRates, byteRates]
    static let range: [OptionSpec] = [begin, end]
}

/// The word a command takes after it, besides options (`completions SHELL`).
struct OperandSpec: Sendable, Hashable {
    let value: String
    let choices: [String]
    let help: String
}

/// The shells `ifmeter completions` writes a script for.
enum Shell: String, CaseIterable, Sendable { case bash, zsh, fish }

/// The commands of `ifmeter`: help, summary and options switch over the case, so none compiles without them.
enum CommandName: String, CaseIterable, Sendable {
    case status, fiveminutes, hours, days, months, years, top, classes, events, live, export, graph, check, interfaces
    case watch, unwatch, rename, merge, forget
    case importHistory = "import"
    case completions

    /// The command run when none is named.
    static let fallback = CommandName.status

    /// Left out of the overview and the completions: packagers run it, users need not see it
    /// (`ifmeter completions --help` and ifmeter(1) still describe it).
    var hidden: Bool {
        switch self {
        case .completions: true
        case .status, .fiveminutes, .hours, .days, .months, .years, .top, .classes, .events, .live, .export, .graph, .check, .interfaces,
             .watch, .unwatch, .rename, .merge, .forget, .importHistory: false
        }
    }

    var operand: OperandSpec? {
        switch self {
        case .completions: OperandSpec(value: "SHELL", choices: Shell.allCases.map(\.rawValue), help: "bash, zsh or fish")
        case .forget: OperandSpec(value: "IFACE", choices: [], help: "the interface whose records go")
        case .watch: OperandSpec(value: "IFACE", choices: [], help: "the interface to count, whatever its class")
        case .unwatch: OperandSpec(value: "IFACE", choices: [], help: "the interface to stop counting")
        case .rename: OperandSpec(value: "OLD NEW", choices: [], help: "the name whose history moves, and its new name")
        case .merge: OperandSpec(value: "SOURCE TARGET", choices: [], help: "the name whose history is added, and the one it is added to")
        case .importHistory: OperandSpec(value: "vnstat FILE", choices: ["vnstat"], help: "vnStat's database (/var/lib/vnstat/vnstat.db)")
        case .status, .fiveminutes, .hours, .days, .months, .years, .top, .classes, .events, .live, .export, .graph, .check, .interfaces: nil
        }
    }

    /// The options this command takes besides the global ones.
    var options: [OptionSpec] {
        switch self {
        case .status: [.interface, .allInterfaces, .oneline, .json, .utc] + OptionSpec.units
        case .fiveminutes, .hours, .days, .months, .years, .top: [.interface, .limit] + OptionSpec.range + [.json, .utc] + OptionSpec.units
        case .classes: [.json] + OptionSpec.units
        case .check: [.budgetLimit, .per, .direction, .budgetTarget, .quiet, .json, .utc] + OptionSpec.units
        case .events: [.interface, .limit, .json, .utc]
        case .live: [.interface, .allLinks, .interval, .count, .json] + OptionSpec.units
        case .export: [.interface, .format, .granularity] + OptionSpec.range + [.utc]
        case .graph: [.output, .svg, .png, .kind, .interface, .days, .dark, .si, .utc]
        case .interfaces: [.all, .json, .iec, .si, .bytes]
        case .importHistory: [.interface, .vnstatConfig]
        case .forget: [.force]
        case .watch, .unwatch, .rename, .merge, .completions: []
        }
    }

    /// Those of `options` the command cannot run without; the help shows them without brackets.
    var requiredOptions: [OptionSpec] { self == .graph ? [.output] : self == .forget ? [.force] : [] }

    var summary: String {
        switch self {
        case .status: "today, billing cycle, since boot, all time, rate, last event, daemon health, budgets (the default)"
        case .fiveminutes: "traffic per five minutes"
        case .hours: "traffic per hour"
        case .days: "traffic per day, with bars"
        case .months: "traffic per month, with bars"
        case .years: "traffic per year"
        case .top: "the largest days, with bars"
        case .classes: "totals per class (Wi-Fi, cellular, tunnel, wired, other)"
        case .events: "the reset log"
        case .live: "rates per interface, refreshed until Ctrl-C"
        case .export: "stored records as CSV or JSON lines"
        case .graph: "a PNG or SVG picture, as vnstati draws: summary, fiveminute, hourly, daily, monthly, yearly or top"
        case .check: "exit 1 or 2 when a data budget is at risk or exceeded"
        case .interfaces: "the links, their class and why, their counters"
        case .watch: "count an interface from now on, whatever its class (vnStat's add)"
        case .unwatch: "stop counting an interface; its history stays"
        case .rename: "give a gone interface's history to its new name (vnStat's rename)"
        case .merge: "add a gone interface's history to another's"
        case .forget: "remove an interface and all its records from the store (vnStat's remove)"
        case .importHistory: "bring vnStat's history of each interface, up to ifmeter's own first sight of it (daemon stopped)"
        case .completions: "the completion script for bash, zsh or fish (for packagers)"
        }
    }

    /// What the command does, after its usage line.
    var description: String {
        switch self {
        case .status:
            """
            One line per interface present (--all: also those gone, and each class's
            "retired CLASS" row, the totals of its interfaces gone for longer than
            DailyDays=): class, state, today, the billing cycle and all time
            (rx + tx), and the rate; the daemon's health and each budget's use.
            -i NAME shows the detail: per interface: class, state (up, down, gone,
            retired), today, the billing cycle (from BillingDay=), since boot,
            all time, the rate (the kernel's count since the daemon's last commit
            over the seconds since it, so status never waits), and the last event
            with its reason. The daemon is stale after three commit intervals
            without a commit. Totals are the store's plus what the kernel counted
            since the daemon's last commit in the same interface life. With
            nothing counted, it names the interfaces present and the Watch= line
            that would count them. Aliases from [Aliases] are shown beside the
            names.
            """
        case .fiveminutes: Self.history("five-minute buckets (kept FiveMinuteHours=)", 24)
        case .hours: Self.history("hour buckets (kept HourlyDays=)", 24)
        case .days: Self.history("day buckets with bars (kept DailyDays=)", 30)
        case .months: Self.history("month buckets with bars", 12)
        case .years: Self.history("year buckets", 100)
        case .top:
            """
            The largest days, largest first, with bars: the --limit N largest
            (default 10) among all the interfaces shown, not per interface.
            -i limits it to interfaces (a+b ranks their merged days); DATE:
            YYYY-MM-DD or "YYYY-MM-DD HH:MM" local time, --end includes the day
            named. Today includes what the kernel counted since the daemon's last
            commit (*); it is ranked by what it holds now, not by an estimate.
            """
        case .classes:
            """
            Totals per class: today, billing cycle, since boot, all time (rx + tx).
            Tunnel traffic also crosses the link it rides on: never add the classes up.
            """
        case .events:
            """
            The reset log: when, which interface, the reason and what is known to
            be lost (none, unknown, discarded), with what happened and the old and
            new ifindex beneath. Newest last; --limit keeps the latest N (default 50).
            """
        case .live:
            """
            Rates per watched interface (--all: every link but loopback) read from
            the kernel directly, a line each redrawn in place every --interval
            (default 1 s) until Ctrl-C, or N times; then the max, average and min
            of each rate, as vnStat's live mode has them. In a pipe the lines are
            appended.
            """
        case .export:
            """
            The stored bucket records (default: csv, day), each row with its
            estimate label (basis) and, when a reset with unknown loss fell in it,
            why it may be incomplete. Times are UTC. DATE: YYYY-MM-DD or
            "YYYY-MM-DD HH:MM" local time; --end includes the day named.
            """
        case .graph:
            """
            Draws received and transmitted bytes as vnstati does, a panel per class
            (per interface, or merge, with -i): --kind summary (today, yesterday,
            this and last month, and the last 24 hours), fiveminute (the last 48
            hours), hourly (the last 24 hours), daily (the last --days, default
            30), monthly (the last 12 months), yearly (the last 10 years) or top
            (the 10 largest days). -o traffic.png writes a PNG, rendered by
            rsvg-convert (Debian package librsvg2-bin; exit 69 without it), any
            other name a self-contained SVG.
            """
        case .check:
            """
            For cron and monitoring: compares each [Budgets] entry, or the one
            --limit gives (as vnStat's alert does), with its period's use: rx,
            tx or rx + tx per hour, day, month, billing cycle or year. Exit 0
            when all are within budget, 1 when one is projected over by the end
            of its period, 2 when one is exceeded, 64 for a bad option, 78 when
            no budget is configured or the configuration is wrong. The
            projection is linear over the time observed (from the period's
            start, or from when counting began if later); none is made before a
            day (a 24th of a shorter period) is observed, so a new period never
            alarms.
            """
        case .interfaces:
            """
            Lists the watched interfaces (--all: every link) with their class, the
            signal that decided it (override, link kind, DEVTYPE, sysfs marker, the
            driver of a phone tethered over USB, ARP type, a real Ethernet device, or
            name), operational state and bytes since the interface was created
            (--json: ifindex, kind and every counter). With none watched, it names
            the links there and the Watch= line that would count them. Loopback is
            never counted.
            """
        case .importHistory:
            """
            Brings the history a vnStat 2.x database holds (five-minute, hour, day,
            month, year and top-day rows, all-time totals) into the store, for each
            interface or those named with -i. Only what ended before ifmeter's own
            first sight of a name is taken, so nothing is counted twice; a row the
            seam cuts is rebuilt from vnStat's finer rows. Imported rows are marked
            ^ on screens and "imported": true in JSON; ifmeter_*_total metrics
            never include them. Importing the same file again changes nothing. With
            MonthRotate other than 1, vnStat's months are not calendar months: they
            are left out, and years too with MonthRotateAffectsYears. Stop vnstatd
            and the daemon first (systemctl stop vnstat ifmeterd.socket ifmeterd).
            """
        case .forget:
            """
            Removes IFACE from the store: its totals, buckets, lives, reset events,
            imported history and what each boot counted, in one transaction; it
            asks for --force, as vnStat's remove does. An interface present at
            the daemon's last commit counts on from zero; to stop counting it, use
            unwatch. \(Self.editing)
            """
        case .watch:
            """
            Counts IFACE from the daemon's next sample on, whatever its class (an
            eth0 that Watch= leaves out), without editing ifmeter.conf; the choice
            is kept in the store and wins over Watch= and [Classes]. \(Self.editing)
            """
        case .unwatch:
            """
            Stops counting IFACE from the daemon's next sample on, whatever its
            class; its history stays (forget removes it). \(Self.editing)
            """
        case .rename:
            """
            Moves the history of OLD (totals, buckets, events, imported rows) to
            NEW, for a link the kernel renamed: OLD must be gone (no link of that
            name counted now) and NEW have no records (else use merge). Budgets
            and the views then find it under NEW. \(Self.editing)
            """
        case .merge:
            """
            Adds the history of SOURCE to TARGET's, period by period, and removes
            SOURCE: for a rename that split one link's history in two. SOURCE must
            be gone; TARGET may be counted now. TARGET's ifmeter_*_total series
            grows by SOURCE's totals at once. \(Self.editing)
            """
        case .completions:
            """
            Prints the completion script for SHELL (bash, zsh or fish), generated
            from the table the command line is parsed with, so it offers exactly
            the commands and options ifmeter accepts. The Debian package and
            make install put it where each shell looks for it.
            """
        }
    }

    /// How the edits reach the store, said once for all of them.
    private static let editing = """
        With ifmeterd running, the daemon applies it between two commits (ifmeter
        leaves the request in the state directory and sends SIGHUP); with none,
        ifmeter applies it under the daemon's lock. Needs write access to the
        store (root, or the daemon's user). A name that starts with a dash goes
        after --.
        """

    private static func history(_ what: String, _ limit: Int) -> String {
        """
        Traffic in \(what).
        -i limits it to interfaces; --limit keeps the latest N rows per
        interface (default \(limit)); DATE: YYYY-MM-DD or "YYYY-MM-DD HH:MM"
        local time, --end includes the day named. The current bucket includes
        what the kernel counted since the daemon's last commit (*), and an
        estimated line: its total at the end at the rate counted so far.
        AVG RATE is the total over the seconds of the period (so far, for the
        current one). Units and date labels: [Display] in ifmeter.conf.
        """
    }

    /// `ifmeter COMMAND --help`: usage, description and the options, all from the table.
    var help: String {
        let usage = "Usage: ifmeter \(rawValue)"
        let words = (operand.map { [$0.value] } ?? []) + options.map { $0.usage(required: requiredOptions.contains($0)) }
        let own = options.isEmpty ? "" : "Options:\n" + Self.optionLines(options) + "\n"
        return Self.wrap(words, first: usage, indent: usage.count + 1) + "\n\n" + description + "\n\n"
            + own + "Options for every command:\n" + Self.optionLines(OptionSpec.global)
    }

    static func optionLines(_ options: [OptionSpec], width: Int? = nil) -> String {
        columns(options.map(\.heading), width: width)
    }

    /// Two columns within 80 characters, the second wrapped under itself.
    static func columns(_ rows: [(String, String)], width: Int? = nil) -> String {
        let width = width ?? rows.map(\.0.count).max() ?? 0
        return rows.map { head, text in
            wrap(text.split(separator: " ").map(String.init), first: "  " + head + String(repeating: " ", count: width - head.count + 1), indent: width + 4) + "\n"
        }.joined()
    }

    /// `first` followed by the words, broken before column 80 and indented.
    static func wrap(_ words: [String], first: String, indent: Int) -> String {
        var lines = [first]
        for word in words {
            if lines[lines.count - 1].count + 1 + word.count > 79 && lines[lines.count - 1].count > indent {
                lines.append(String(repeating: " ", count: indent - 1))
            }
            lines[lines.count - 1] += " " + word
        }
        return lines.joined(separator: "\n")
    }

    static let overview: String = {
        let commands = columns(allCases.filter { !$0.hidden }.map { ($0.rawValue, $0.summary) })
        // One column for both lists of options.
        let width = (OptionSpec.global + OptionSpec.leading).map(\.heading.0.count).max()
        return """
            Usage: ifmeter [--state-dir DIR] [--config FILE] [COMMAND] [OPTIONS]
                   ifmeter --version

            Traffic on Wi-Fi, cellular and tunnel interfaces, from the store ifmeterd
            keeps plus the kernel's counters now. All figures are estimates from kernel
            interface counters: not per-application, not billing-grade.

            Commands:
            \(commands)
            Options for every command (help COMMAND or COMMAND --help: its own):
            \(optionLines(OptionSpec.global, width: width))
            Without a command:
            \(optionLines(OptionSpec.leading, width: width))
            vnStat's forms: ifmeter wlan0, -5, -h (hours, as the first word), -d, -m,
            -y, -t, -l; days 7 (a limit).

            Exit codes: 0 ok, 64 usage, 65 unreadable store, 66 no store yet or missing
            file, 69 kernel (or rsvg-convert) unavailable, 70 PNG renderer failed,
            73 cannot write, 74 I/O error, 77 permission
            denied (no daemon view and no right to read the store; forget), 78 configuration;
            check: 1, 2.

            """
    }()
}
