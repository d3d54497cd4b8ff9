/// The help texts of `ifmeter` and each of its commands.
enum CommandHelp {
    static let overview = """
        Usage: ifmeter [--state-dir DIR] [--config FILE] [COMMAND] [OPTIONS]

        Traffic on Wi-Fi, cellular and tunnel interfaces, from the store ifmeterd
        keeps plus the kernel's counters now. All figures are estimates from kernel
        interface counters: not per-application, not billing-grade.

        Commands:
          status [IFACE...]   today, billing cycle, since boot, all time, rate,
                              last reset, daemon health, budgets (the default)
          hours | days | months | years | top
                              traffic per time bucket (top: the largest days)
          classes             totals per class (Wi-Fi, cellular, tunnel)
          events              the reset log
          live                rates per interface, refreshed until Ctrl-C
          export              stored records as CSV or JSON lines
          graph --svg FILE    an SVG of daily traffic per class
          check               exit 1 or 2 when a data budget is at risk or exceeded
          interfaces          the links, their class and why, raw counters

        Options for every command:
          --state-dir DIR   the daemon's state directory (default: StateDirectory=
                            in the config, else $STATE_DIRECTORY, else /var/lib/ifmeter)
          --config FILE     configuration (default /etc/ifmeter/ifmeter.conf, optional)
          --json            machine-readable output (versioned schema, "estimate": true)
          --si              1000-based units (kB, MB) instead of KiB, MiB
          --bytes           raw byte counts
          --byte-rates      rates in bytes per second instead of bits per second
          -h, --help        this help; COMMAND --help for a command's own

        Exit codes: 0 ok, 64 usage, 65 unreadable store, 66 no store yet or missing
        file, 69 kernel unavailable, 73 cannot write, 78 configuration; check: 1, 2.

        """

    static let text: [String: String] = [
        "status": """
            Usage: ifmeter status [IFACE...] [--json]

            Per interface: class, state (up, down, gone), today, the billing cycle
            (from BillingDay=), since boot, all time, the rate over half a second,
            and the last reset with its reason; the daemon's health (stale after
            three commit intervals without a commit) and each budget's use.
            Totals are the store's plus what the kernel counted since the daemon's
            last commit in the same interface life.

            """,
        "hours": history("hours", "hour buckets (kept HourlyDays=)", 24),
        "days": history("days", "day buckets with bars (kept DailyDays=)", 30),
        "months": history("months", "month buckets with bars", 12),
        "years": history("years", "year buckets", 100),
        "top": history("top", "the largest days with bars", 10),
        "classes": """
            Usage: ifmeter classes [--json]

            Totals per class: today, billing cycle, since boot, all time (rx + tx).
            Tunnel traffic also crosses the link it rides on: never add the classes up.

            """,
        "events": """
            Usage: ifmeter events [-i IFACE]... [--limit N] [--json]

            The reset log: when, which interface, old and new ifindex, the reason,
            and what is known to be lost (none, unknown, discarded). Newest last;
            --limit keeps the latest N (default 50).

            """,
        "live": """
            Usage: ifmeter live [--interval SECONDS] [--count N] [--json]

            Rates per watched interface read from the kernel directly, refreshed
            every --interval (default 1 s) in place until Ctrl-C, or N times.

            """,
        "export": """
            Usage: ifmeter export [--format csv|jsonl] [--granularity 5min|hour|day|month|year]
                                  [--begin DATE] [--end DATE]

            The stored bucket records (default: csv, day), each row with its
            estimate label (basis) and, when a reset with unknown loss fell in it,
            why it may be incomplete. Times are UTC. DATE: YYYY-MM-DD or
            "YYYY-MM-DD HH:MM" local time; --end includes the day named.

            """,
        "graph": """
            Usage: ifmeter graph --svg FILE [--days N]

            Writes a self-contained SVG of daily received and transmitted bytes per
            class over the last N days (default 30).

            """,
        "check": """
            Usage: ifmeter check [--json]

            For cron and monitoring: compares each [Budgets] entry with this billing
            cycle's use (rx + tx). Exit 0 when all are within budget, 1 when one is
            projected over by the end of the cycle (linear projection), 2 when one
            is exceeded, 78 when no budget is configured.

            """,
        "interfaces": """
            Usage: ifmeter interfaces [--all] [--json]

            Lists Wi-Fi, cellular and tunnel interfaces with their class, the signal
            that decided it (override, link kind, DEVTYPE, sysfs marker, ARP type or
            name), ifindex, link kind, operational state and 64-bit counters since
            the interface was created.

              --all    also list other and ignored interfaces

            """,
    ]

    static func history(_ command: String, _ what: String, _ limit: Int) -> String {
        """
        Usage: ifmeter \(command) [-i IFACE]... [--limit N] [--begin DATE] [--end DATE] [--json]

        Traffic in \(what). -i limits it to interfaces; --limit keeps the latest
        N rows per interface (default \(limit)); DATE: YYYY-MM-DD or
        "YYYY-MM-DD HH:MM" local time, --end includes the day named. The current
        bucket includes what the kernel counted since the daemon's last commit (*).

        """
    }
}
