import IfmeterTestSupport
import Testing
@testable import IfmeterCore

@Suite struct ConfigurationFileTests {
    @Test func parsesEverySection() throws {
        let text = """
            # comment
            [Daemon]
            SampleIntervalSec = 5
            CommitIntervalSec=60
            StateDirectory=/tmp/state
            MaxRate=100M
            EventBufferBytes=64K
            BootIDPath=/tmp/boot_id
            [Interfaces]
            Watch=cellular tunnel
            [Classes]
            ppp*=tunnel
            veth*=ignore
            [Retention]
            DailyDays=400
            YearlyYears=0
            [Budgets]
            BillingDay=15
            cellular=20GB
            wwan0=1.5GiB
            """
        let configuration = try ConfigurationFile.parse(text, path: "test.conf")
        #expect(configuration.sampleInterval == 5)
        #expect(configuration.commitInterval == 60)
        #expect(configuration.stateDirectory == "/tmp/state")
        #expect(configuration.maxRateBitsPerSecond == 100_000_000)
        #expect(configuration.eventBufferBytes == 65536)
        #expect(configuration.bootIDPath == "/tmp/boot_id")
        #expect(configuration.watchedClasses == [.cellular, .tunnel])
        #expect(configuration.overrides == [
            InterfaceOverride(pattern: "ppp*", action: .assign(.tunnel)),
            InterfaceOverride(pattern: "veth*", action: .ignore),
        ])
        #expect(configuration.retention.dailyDays == 400)
        #expect(configuration.billingDay == 15)
        #expect(configuration.budgets == [
            Budget(target: .interfaceClass(.cellular), bytes: 20_000_000_000, decimal: true),
            Budget(target: .interface("wwan0"), bytes: 1_610_612_736),
        ])
    }

    /// A budget keeps the unit system it was written in.
    @Test(arguments: [("5MB", true), ("5M", true), ("1.5GB", true), ("5MiB", false), ("2GiB", false), ("5000000B", false), ("5000000", false)])
    func budgetsRememberTheirUnits(_ testCase: (String, Bool)) throws {
        let configuration = try ConfigurationFile.parse("[Budgets]\ncellular=\(testCase.0)\n", path: "units.conf")
        #expect(configuration.budgets.first?.decimal == testCase.1)
    }

    /// `[Budgets]` lines beyond a cycle's total: vnstat --alert's periods and directions, in any order.
    static let budgetLines: [(line: String, budget: Budget)] = [
        ("cellular=20GB", Budget(target: .interfaceClass(.cellular), bytes: 20_000_000_000, decimal: true)),
        ("wwan0=1GB per day rx", Budget(target: .interface("wwan0"), bytes: 1_000_000_000, decimal: true, period: .day, direction: .rx)),
        ("tun0 = 100MiB  tx\tper hour", Budget(target: .interface("tun0"), bytes: 104_857_600, period: .hour, direction: .tx)),
        ("wifi=2TB per year", Budget(target: .interfaceClass(.wifi), bytes: 2_000_000_000_000, decimal: true, period: .year)),
        ("wlan0=50GB per month total", Budget(target: .interface("wlan0"), bytes: 50_000_000_000, decimal: true, period: .month)),
        ("wlan0=50GB per cycle", Budget(target: .interface("wlan0"), bytes: 50_000_000_000, decimal: true)),
    ]

    @Test(arguments: budgetLines)
    func budgetLinesTakePeriodsAndDirections(_ testCase: (line: String, budget: Budget)) throws {
        let configuration = try ConfigurationFile.parse("[Budgets]\n\(testCase.line)\n", path: "budgets.conf")
        #expect(configuration.budgets == [testCase.budget])
    }

    /// One target may have a budget per period and direction; a billing day of its own moves its cycles only.
    @Test func severalBudgetsAndBillingDaysPerTarget() throws {
        let text = "[Budgets]\nBillingDay=12\nBillingDay.wwan0=3\nBillingDay.cellular=20\nwwan0=5GB\nwwan0=1GB per day\nwwan0=800MB per day rx\ntun0=1GB\ncellular=20GB\n"
        let configuration = try ConfigurationFile.parse(text, path: "budgets.conf")
        #expect(configuration.budgets.map(\.qualifier) == ["", "per day", "per day rx", "", ""])
        #expect(configuration.budgets.map(configuration.billingDay(for:)) == [3, 3, 3, 12, 20])
    }

    static let badFiles: [(text: String, error: String)] = [
        ("[Budgets]\nwwan0=5GB\nwwan0=6GB", "bad.conf:3: wwan0= set twice in [Budgets]"),
        ("[Budgets]\nwwan0=5GB per day rx\nwwan0=6GB rx per day", "bad.conf:3: wwan0= (per day rx) set twice in [Budgets]"),
        ("[Budgets]\nwwan0=5GB per week", "bad.conf:2: wwan0=\"5GB per week\": expected per hour, day, month, cycle or year"),
        ("[Budgets]\nwwan0=5GB per", "bad.conf:2: wwan0=\"5GB per\": expected per hour, day, month, cycle or year"),
        ("[Budgets]\nwwan0=5GB per day per hour", "bad.conf:2: wwan0=\"5GB per day per hour\": per given twice"),
        ("[Budgets]\nwwan0=5GB rx tx", "bad.conf:2: wwan0=\"5GB rx tx\": rx, tx or total given twice"),
        ("[Budgets]\nwwan0=5GB daily", "bad.conf:2: wwan0=\"5GB daily\": \"daily\": expected per hour, day, month, cycle or year, then rx, tx or total"),
        ("[Budgets]\nwwan0=per day 5GB", "bad.conf:2: wwan0=\"per day 5GB\": expected an amount like 20GB (1000-based) or 5GiB (1024-based)"),
        ("[Budgets]\nBillingDay.wwan0=29", "bad.conf:2: BillingDay.wwan0=\"29\": expected a whole number from 1 to 28"),
        ("[Budgets]\nBillingDay.wwan0=3\nBillingDay.wwan0=4", "bad.conf:3: BillingDay.wwan0= set twice in [Budgets]"),
        ("[Budgets]\nBillingDay.celular=3", "bad.conf:2: \"celular\"=: not a class; did you mean cellular? " + misspeltClassNote),
        ("[Daemon]\nSampleIntervalSec=fast", "bad.conf:2: SampleIntervalSec=\"fast\": expected seconds from 0.1 to 86400.0"),
        ("[Daemon]\nSampleIntervalSec=0", "bad.conf:2: SampleIntervalSec=\"0\": expected seconds from 0.1 to 86400.0"),
        ("[Daemon]\nSampelIntervalSec=5", "bad.conf:2: unknown key \"SampelIntervalSec\" in [Daemon]; did you mean SampleIntervalSec=?"),
        ("[Interfaces]\nWatc=wifi", "bad.conf:2: unknown key \"Watc\" in [Interfaces]; did you mean Watch=?"),
        ("[Interfaces]\nClasses=wifi", "bad.conf:2: unknown key \"Classes\" in [Interfaces] (known: Watch=)"),
        ("[Retention]\ndailydays=40", "bad.conf:2: unknown key \"dailydays\" in [Retention]; did you mean DailyDays=?"),
        ("[Deamon]", "bad.conf:1: unknown section \"Deamon\" (known: [Daemon], [Interfaces], [Classes], [Retention], [Budgets], [Aliases], [Display])"),
        // A name from a 4 KiB line is shown as far as a person reads it.
        ("[" + String(repeating: "s", count: 4000) + "]", "bad.conf:1: unknown section \"" + String(repeating: "s", count: 40) + "…\" (known: [Daemon], [Interfaces], [Classes], [Retention], [Budgets], [Aliases], [Display])"),
        ("[Aliases]\nwwan*=phone", "bad.conf:2: \"wwan*\": an alias names one interface, like wwan0=phone"),
        ("[Aliases]\nwwan0=", "bad.conf:2: wwan0=\"\": an alias is 1 to 32 printable characters"),
        ("SampleIntervalSec=5", "bad.conf:1: \"SampleIntervalSec\"= outside any section"),
        (String(repeating: "k", count: 4000) + "=1", "bad.conf:1: \"" + String(repeating: "k", count: 40) + "…\"= outside any section"),
        ("[Daemon]\n\nMaxRate=99999999999999999999T", "bad.conf:3: MaxRate=\"99999999999999999999T\": expected bits per second like 100M or 10G"),
        ("[Daemon]\nStateDirectory=relative", "bad.conf:2: StateDirectory=\"relative\": expected an absolute path"),
        ("[Daemon]\nSampleIntervalSec=5\nSampleIntervalSec=6", "bad.conf:3: SampleIntervalSec= set twice in [Daemon]"),
        ("[Classes]\ntun*=tunnel\nwg*=tunnel\ntun*=wifi", "bad.conf:4: tun*= set twice in [Classes]; the first wins, this line would never apply"),
        ("[Daemon]\n" + String(repeating: "k", count: 4000) + "=1", "bad.conf:2: unknown key \"" + String(repeating: "k", count: 40) + "…\" in [Daemon] (known: SampleIntervalSec= CommitIntervalSec= StateDirectory= MaxRate= EventBufferBytes= BootIDPath= MetricsFile= MetricsKeepGoneSec= SysfsRoot= TimeSyncWaitSec=)"),
        ("[Interfaces]\nWatch=wifi satellite", "bad.conf:2: Watch=: unknown class \"satellite\" (known: wifi cellular tunnel wired other)"),
        ("[Classes]\nppp[0-9=cellular", "bad.conf:2: \"ppp[0-9\": invalid name pattern (unclosed [ or longer than 15 characters of name)"),
        ("[Classes]\nppp*=modem", "bad.conf:2: ppp*=\"modem\": expected wifi, cellular, tunnel, wired, other or ignore"),
        ("[Daemon]\nMaxRate=1\u{0}0", "bad.conf:2: NUL byte in line"),
        ("[Daemon]\nnonsense", "bad.conf:2: expected Key=Value, got \"nonsense\""),
        ("[Daemon", "bad.conf:1: malformed section header \"[Daemon\""),
        ("[Retention]\nDailyDays=-1", "bad.conf:2: DailyDays=\"-1\": expected a whole number from 0 to 100000"),
        ("[Daemon]\n" + String(repeating: "x", count: 5000), "bad.conf:2: line longer than 4096 bytes"),
        ("[Retention]\nDailyDays=7", "bad.conf:2: DailyDays=7: keep at least 32 days (or 0, forever) to cover a billing cycle"),
        ("[Budgets]\nBillingDay=31", "bad.conf:2: BillingDay=\"31\": expected a whole number from 1 to 28"),
        ("[Budgets]\ncellular=lots", "bad.conf:2: cellular=\"lots\": expected an amount like 20GB (1000-based) or 5GiB (1024-based)"),
        ("[Budgets]\nwwan*=5G", "bad.conf:2: \"wwan*\": a budget names a class (wifi, cellular, tunnel, wired, other) or an interface"),
        ("[Budgets]\n" + String(repeating: "w", count: 4000) + "=5G", "bad.conf:2: \"" + String(repeating: "w", count: 40) + "…\": a budget names a class (wifi, cellular, tunnel, wired, other) or an interface"),
        // A key that is no class but within two edits of one, five
        // characters or more with no digit, is a misspelt class: taken for
        // an interface, its budget would never alarm.
        ("[Budgets]\ncelular=20GB", "bad.conf:2: \"celular\"=: not a class; did you mean cellular? " + misspeltClassNote),
        ("[Budgets]\nBillingDay=3\ncellullar=20GB", "bad.conf:3: \"cellullar\"=: not a class; did you mean cellular? " + misspeltClassNote),
        ("[Budgets]\nCellular=20GB", "bad.conf:2: \"Cellular\"=: not a class; did you mean cellular? " + misspeltClassNote),
        ("[Budgets]\nwirde=1GB", "bad.conf:2: \"wirde\"=: not a class; did you mean wired? " + misspeltClassNote),  // a transposition is one edit
        ("[Budgets]\ntunel=1GB", "bad.conf:2: \"tunel\"=: not a class; did you mean tunnel? " + misspeltClassNote),
        ("[Budgets]\nwifii=1GB", "bad.conf:2: \"wifii\"=: not a class; did you mean wifi? " + misspeltClassNote),
        ("[Budgets]\nothers=1GB", "bad.conf:2: \"others\"=: not a class; did you mean other? " + misspeltClassNote),
        ("[Budgets]\ncelular=lots", "bad.conf:2: \"celular\"=: not a class; did you mean cellular? " + misspeltClassNote),
        ("[Display]\nUnits=kibi", "bad.conf:2: Units=\"kibi\": expected iec, si, bytes"),
        ("[Display]\nRateUnit=bps", "bad.conf:2: RateUnit=\"bps\": expected bits, bytes"),
        ("[Display]\nDateFormat=%d.%m.", "bad.conf:2: unknown key \"DateFormat\" in [Display]; did you mean DayFormat=?"),
        ("[Display]\nDayFormat=%d %H:%M", "bad.conf:2: DayFormat=\"%d %H:%M\": " + dayConversions),
        ("[Display]\nMonthFormat=%Y-%m-%d", "bad.conf:2: MonthFormat=\"%Y-%m-%d\": a month label takes only the conversions %% %B %C %Y %b %h %m %y"),
        ("[Display]\nDayFormat=%", "bad.conf:2: DayFormat=\"%\": " + dayConversions),
        ("[Display]\nDayFormat=%A, %d %B %Y", "bad.conf:2: DayFormat=\"%A, %d %B %Y\": labels up to 28 characters wide; at most 11 keep the views within 80 columns"),
        ("[Display]\nDayFormat=", "bad.conf:2: DayFormat=\"\": expected a strftime pattern of printable ASCII, like %d.%m.%Y"),
        ("[Display]\nMonthFormat=%b\u{7}", "bad.conf:2: MonthFormat=\"%b?\": expected a strftime pattern of printable ASCII, like %b %Y"),
        ("[Budgets]\n" + String(repeating: "w", count: 4000) + "=lots", "bad.conf:2: \"" + String(repeating: "w", count: 40) + "…\": a budget names a class (wifi, cellular, tunnel, wired, other) or an interface"),
    ]

    /// [Display]: the CLI's units and date labels, as vnStat's UnitMode, RateUnit, DayFormat and MonthFormat.
    static let displays: [(text: String, display: DisplayDefaults)] = [
        ("", DisplayDefaults()),
        ("Units=si\nRateUnit=bytes", DisplayDefaults(units: Units(scale: .si, ratesInBits: false))),
        ("Units=IEC\nRateUnit=Bits", DisplayDefaults(units: Units(scale: .iec, ratesInBits: true))),
        ("Units=bytes", DisplayDefaults(units: Units(scale: .raw))),
        ("DayFormat=%d.%m.%Y\nMonthFormat=%b %Y", DisplayDefaults(dates: DateFormats(day: "%d.%m.%Y", month: "%b %Y"))),
        // Quoted as vnstat.conf writes it.
        ("DayFormat=\"%x\"", DisplayDefaults(dates: DateFormats(day: "%x"))),
        ("DayFormat=%a %e %b", DisplayDefaults(dates: DateFormats(day: "%a %e %b"))),
    ]

    @Test(arguments: displays)
    func displayDefaults(_ c: (text: String, display: DisplayDefaults)) throws {
        #expect(try ConfigurationFile.parse("[Display]\n" + c.text + "\n", path: "display.conf").display == c.display)
    }

    static let dayConversions = "a day label takes only the conversions %% %A %B %C %D %F %G %U %V %W %Y %a %b %d %e %g %h %j %m %u %w %x %y"
    static let misspeltClassNote = "(a key this close to a class names an interface only if it has a digit, like wwan0)"

    /// Keys of [Budgets] name interfaces too, before they are first seen:
    /// one with a digit, shorter than five characters or more than two
    /// edits from every class is an interface, never refused.
    @Test(arguments: ["wifi0", "wwan0", "tun0", "wlan", "wifi", "celular0", "cell", "wire", "mobile", "office", "tethering", "wg-home", "ppp0"])
    func budgetKeysThatNameInterfaces(_ key: String) throws {
        let configuration = try ConfigurationFile.parse("[Budgets]\n\(key)=5GB\n", path: "names.conf")
        let expected: Budget.Target = InterfaceClass(rawValue: key).map { .interfaceClass($0) } ?? .interface(key)
        #expect(configuration.budgets.map(\.target) == [expected])
    }

    @Test(arguments: [
        ("celular", "cellular", 1), ("cellualr", "cellular", 1), ("wirde", "wired", 1), ("tunnle", "tunnel", 1),
        ("ohter", "other", 1), ("cellar", "cellular", 2), ("wwan0", "wifi", 4), ("", "wifi", 4), ("wifi", "wifi", 0),
    ])
    func editDistance(_ testCase: (String, String, Int)) {
        #expect(ConfigurationFile.editDistance(Array(testCase.0), Array(testCase.1)) == testCase.2)
    }

    @Test(arguments: badFiles)
    func rejectsWithFileAndLine(_ testCase: (text: String, error: String)) {
        #expect {
            _ = try ConfigurationFile.parse(testCase.text, path: "bad.conf")
        } throws: { error in
            (error as? ConfigurationError)?.description == testCase.error
        }
    }

    /// A file saved with a byte-order mark reads as the same file.
    @Test func aByteOrderMarkIsNoPartOfTheFirstLine() throws {
        let configuration = try ConfigurationFile.parse("\u{FEFF}[Daemon]\r\nSampleIntervalSec=5\r\n", path: "bom.conf")
        #expect(configuration.sampleInterval == 5)
    }

    @Test func crlfLineEndsAreLinesToo() throws {
        let configuration = try ConfigurationFile.parse("[Daemon]\r\nSampleIntervalSec=5\r\n[Classes]\r\nppp*=tunnel\r\n", path: "dos.conf")
        #expect(configuration.sampleInterval == 5)
        #expect(configuration.overrides == [InterfaceOverride(pattern: "ppp*", action: .assign(.tunnel))])
        #expect {
            _ = try ConfigurationFile.parse("[Daemon]\r\n\r\nBogus=1\r\n", path: "dos.conf")
        } throws: { error in
            (error as? ConfigurationError)?.description == "dos.conf:3: unknown key \"Bogus\" in [Daemon] (known: SampleIntervalSec= CommitIntervalSec= StateDirectory= MaxRate= EventBufferBytes= BootIDPath= MetricsFile= MetricsKeepGoneSec= SysfsRoot= TimeSyncWaitSec=)"
        }
    }

    /// The keys an unknown key's error lists are keys the parser takes:
    /// whatever a value does, none of them is "unknown".
    @Test(arguments: ConfigurationFile.knownKeys.flatMap { section, keys in keys.map { (section, $0) } })
    func everyKeyTheErrorListsIsTaken(section: String, key: String) {
        do {
            _ = try ConfigurationFile.parse("[\(section)]\n\(key)=x\n", path: "keys.conf")
        } catch {
            #expect(!error.description.contains("unknown key"), "\(error)")
        }
    }

    @Test func missingDefaultFileMeansDefaults() throws {
        let configuration = try ConfigurationFile.load(path: "/nonexistent/ifmeter.conf", required: false)
        #expect(configuration.sampleInterval == Configuration().sampleInterval)
        #expect(throws: ConfigurationError.self) {
            try ConfigurationFile.load(path: "/nonexistent/ifmeter.conf", required: true)
        }
    }

    @Test func stateDirectoryPrecedence() {
        var configuration = Configuration()
        #expect(configuration.resolvedStateDirectory(environment: [:]) == "/var/lib/ifmeter")
        #expect(configuration.resolvedStateDirectory(environment: ["STATE_DIRECTORY": "/var/lib/x:/var/lib/y"]) == "/var/lib/x")
        configuration.stateDirectory = "/srv/ifmeter"
        #expect(configuration.resolvedStateDirectory(environment: ["STATE_DIRECTORY": "/var/lib/x"]) == "/srv/ifmeter")
    }
}
