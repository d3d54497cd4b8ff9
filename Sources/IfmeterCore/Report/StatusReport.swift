/// `ifmeter status`, `ifmeter classes` and `ifmeter check`: pure renderings of a snapshot.
package enum StatusReport {
    /// Why the figures are the store's alone, when they are.
    static func kernelNote(_ snapshot: Snapshot) -> String {
        if snapshot.foreignNamespace {
            return "this ifmeter runs in another network namespace than the daemon: figures are the store's as of its last commit, none of this namespace's links mixed in\n"
        }
        return snapshot.kernelRead ? "" : "kernel counters could not be read: figures are the store's as of its last commit\n"
    }

    package static let schema = "ifmeter.status/1"

    // MARK: Text

    package static func text(_ snapshot: Snapshot, units: Units, configPath: String = Configuration.defaultPath) -> String {
        var output = "ifmeter status at \(TimeText.moment(snapshot.now))\n"
        output += daemonLine(snapshot) + "\n"
        output += kernelNote(snapshot)
        if snapshot.interfaces.isEmpty { output += "\n" + nothingCounted(snapshot, configPath: configPath) }
        for interface in snapshot.interfaces {
            let alias = snapshot.aliases[interface.name].map { " (\($0))" } ?? ""
            output += "\n\(interface.name)\(alias)  \(displayClass(interface.interfaceClass)) (\(interface.signal)), \(interface.presence.rawValue)\n"
            var table = TextTable([("", .left), ("rx", .right), ("tx", .right), ("total", .right), ("", .left)])
            func row(_ label: String, _ counters: LinkCounters, _ note: String = "") {
                table.append([label, units.bytes(counters.rxBytes), units.bytes(counters.txBytes), units.bytes(counters.totalBytes), note])
            }
            row("today", interface.today)
            row("yesterday", interface.yesterday)
            row("cycle", interface.cycle, "since \(TimeText.format(snapshot.cycleStart, "%Y-%m-%d"))")
            row("last month", interface.lastMonth)
            row("since boot", interface.sinceBoot)
            row("all time", interface.allTime, interface.imported.map { imported in
                "\(units.bytes(imported.totals.totalBytes)) of it imported from \(imported.source)"
                    + (imported.seam.map { ", counted by ifmeter since \(TimeText.moment($0))" } ?? "")
            } ?? "")
            if let rate = interface.rate {
                let window = interface.rateWindow.map { "average over the last \(Int($0)) s" } ?? ""
                table.append(["rate", units.rate(bytesPerSecond: rate.rx), units.rate(bytesPerSecond: rate.tx), units.rate(bytesPerSecond: rate.rx + rate.tx), window])
            }
            output += table.rendered().split(separator: "\n").map { "  " + $0 }.joined(separator: "\n") + "\n"
            if let event = interface.lastEvent {
                let when = event.pending ? "(at the daemon's next start)" : TimeText.moment(event.time)
                let lines = Wrapping.lines("\(when) \(event.reason.rawValue), \(event.loss.phrase): \(event.detail)", width: 80 - 14)
                output += "  last event  " + lines.joined(separator: "\n" + String(repeating: " ", count: 14)) + "\n"
            } else {
                output += "  last event  none\n"
            }
        }
        if !snapshot.budgets.isEmpty { output += "\n" + budgetLines(snapshot, units: units) }
        return output + Estimate.basis + ".\n"
    }

    /// "3 d 4 h", "5 h 10 min", "40 min".
    static func duration(_ seconds: Int64) -> String {
        let days = seconds / 86_400, hours = seconds % 86_400 / 3600, minutes = seconds % 3600 / 60
        if days > 0 { return hours > 0 ? "\(days) d \(hours) h" : "\(days) d" }
        if hours > 0 { return minutes > 0 ? "\(hours) h \(minutes) min" : "\(hours) h" }
        return "\(minutes) min"
    }

    /// The default screen: one line per interface within 80 columns, gone and unwatched ones left out
    /// unless `all`, names in natural order; the daemon's health and the budgets as in `-i NAME`.
    package static func summary(_ snapshot: Snapshot, units: Units, all: Bool, configPath: String = Configuration.defaultPath) -> String {
        var output = "ifmeter status at \(TimeText.moment(snapshot.now))\n" + daemonLine(snapshot) + "\n"
        output += kernelNote(snapshot)
        let shown = snapshot.interfaces.filter { all || $0.isShownByDefault }.sorted { NaturalOrder.less($0.name, $1.name) }
        func hidden(_ presence: LinkPresence) -> Int { all ? 0 : snapshot.interfaces.filter { $0.presence == presence }.count }
        var table = TextTable([
            ("INTERFACE", .left), ("CLASS", .left), ("STATE", .left), ("TODAY", .right), ("CYCLE", .right), ("ALL TIME", .right), ("RATE", .right),
        ])
        for interface in shown {
            func total(_ counters: LinkCounters) -> String { units.bytes(counters.totalBytes) }
            let rate = interface.rate.map { units.rate(bytesPerSecond: $0.rx + $0.tx) } ?? "-"
            table.append([interface.name + (snapshot.aliases[interface.name].map { " (\($0))" } ?? ""), displayClass(interface.interfaceClass), interface.presence.rawValue,
                          total(interface.today), total(interface.cycle), total(interface.allTime), rate])
        }
        output += "\n"
        if snapshot.interfaces.isEmpty {
            output += nothingCounted(snapshot, configPath: configPath)
        } else if shown.isEmpty {
            output += "No interface counted now.\n"
        } else {
            output += table.rendered()
        }
        let hiddenParts = [(LinkPresence.gone, "gone interface"), (.unwatched, "unwatched interface"), (.retired, "retired total")].compactMap { presence, noun in
            let count = hidden(presence)
            return count > 0 ? "\(count) \(noun)\(count == 1 ? "" : "s")" : nil
        }
        if !hiddenParts.isEmpty {
            let listed = hiddenParts.count > 2 ? hiddenParts.dropLast().joined(separator: ", ") + " and " + hiddenParts.last! : hiddenParts.joined(separator: " and ")
            output += "\(listed) not shown (--all shows them).\n"
        }
        output += "rx + tx; cycle since \(TimeText.format(snapshot.cycleStart, "%Y-%m-%d")); -i NAME for the detail.\n"
        if !snapshot.budgets.isEmpty { output += "\n" + budgetLines(snapshot, units: units) }
        return output + Estimate.basis + ".\n"
    }

    /// `--oneline`: a line per interface for scripts, `;`-separated, bytes as integers: name;class;state;today rx;
    /// today tx;cycle rx;cycle tx;all-time rx;all-time tx;rx bytes/s;tx bytes/s.
    package static func oneline(_ snapshot: Snapshot, all: Bool) -> String {
        snapshot.interfaces.filter { all || $0.isShownByDefault }.sorted { NaturalOrder.less($0.name, $1.name) }.map { interface in
            let rate = interface.rate.map { [String(Int64($0.rx.rounded())), String(Int64($0.tx.rounded()))] } ?? ["", ""]
            return ([interface.name, interface.interfaceClass, interface.presence.rawValue]
                + [interface.today, interface.cycle, interface.allTime].flatMap { [String($0.rxBytes), String($0.txBytes)] } + rate)
                .joined(separator: ";") + "\n"
        }.joined()
    }

    /// "No interface counted yet", and when the kernel was read, the links and the `Watch=` line that would count them.
    static func nothingCounted(_ snapshot: Snapshot, configPath: String) -> String {
        let text = "No interface counted yet.\n"
        guard snapshot.kernelRead else { return text }
        return text + InterfacesReport.watchHint(unwatched: snapshot.unwatched, watched: snapshot.watchedClasses, configPath: configPath)
    }

    static func displayClass(_ raw: String) -> String { InterfaceClass(rawValue: raw)?.displayName ?? raw }

    /// Within 80 columns: the commit interval is in the JSON.
    static func daemonLine(_ snapshot: Snapshot) -> String {
        let health = snapshot.daemon
        guard let last = health.lastCommit else { return "daemon: no commit yet" }
        let age = max(snapshot.now - last, 0)
        let ago = age < 120 ? "\(age) s" : duration(age)
        let state = health.running ? "running" : "not running"
        return "daemon: \(health.stale ? "STALE, " : "")\(state), last commit \(TimeText.moment(last)) (\(ago) ago)"
    }

    /// A table per period and direction, in the order configured; the footnote names the cycle when every period is one.
    package static func budgetLines(_ snapshot: Snapshot, units: Units) -> String {
        var groups: [(heading: String, rows: [BudgetStatus])] = []
        for status in snapshot.budgets {
            let heading = "budgets, \(periodPhrase(status)) (\(status.budget.direction.phrase)):\n"
            if let index = groups.firstIndex(where: { $0.heading == heading }) {
                groups[index].rows.append(status)
            } else {
                groups.append((heading, [status]))
            }
        }
        let output = groups.map { heading, rows in
            var table = TextTable([
                ("", .left), ("used", .right), ("budget", .right), ("left", .right), ("projected", .right), ("observed", .right), ("", .left),
            ])
            for status in rows { table.append(budgetRow(status, units: units)) }
            return heading + table.rendered().split(separator: "\n").map { "  " + $0 }.joined(separator: "\n") + "\n"
        }.joined()
        let shortest = snapshot.budgets.map { $0.periodEnd - $0.periodStart }.min() ?? 0
        if shortest >= 28 * BudgetProjection.day {
            return output
                + "  projected: use at the cycle's end at the rate observed since counting\n"
                + "  began; made after a day observed, at risk = projected over the budget\n"
        }
        return output
            + "  projected: use at the period's end at the rate observed since counting\n"
            + "  began; made after a day observed (a 24th of a shorter period), at risk =\n"
            + "  projected over the budget\n"
    }

    /// `check`'s screen: the budget tables and what the figures are.
    package static func checkText(_ snapshot: Snapshot, units: Units) -> String {
        budgetLines(snapshot, units: units) + Estimate.basis + "\n"
    }

    /// "billing cycle 2026-11-15 to 2026-12-15", "day 2026-12-07", "hour 2026-12-07 14:00".
    static func periodPhrase(_ status: BudgetStatus) -> String {
        switch status.budget.period {
        case .cycle: "billing cycle \(TimeText.format(status.periodStart, "%Y-%m-%d")) to \(TimeText.format(status.periodEnd, "%Y-%m-%d"))"
        case .hour: "hour \(TimeText.format(status.periodStart, "%Y-%m-%d %H:%M"))"
        case .day: "day \(TimeText.format(status.periodStart, "%Y-%m-%d"))"
        case .month: "month \(TimeText.format(status.periodStart, "%Y-%m"))"
        case .year: "year \(TimeText.format(status.periodStart, "%Y"))"
        }
    }

    static func budgetRow(_ status: BudgetStatus, units: Units) -> [String] {
        // A budget written "20GB" reads back in GB unless --si or --bytes chose.
        let units = status.budget.decimal && units.scale == .iec ? Units(scale: .si, ratesInBits: units.ratesInBits) : units
        let left = status.remaining >= 0 ? units.bytes(UInt64(status.remaining)) : "-" + units.bytes(UInt64(-status.remaining))
        let projection = status.projection
        let verdict: String
        switch status.state {
        // Short: the row stays within 80 columns (projected shows "-").
        case .ok where status.interfaceCounted == false: verdict = "not counted yet"
        case .ok: verdict = projection.isTrusted ? "ok" : "ok, too early"
        case .projectedOver: verdict = "at risk"
        case .exceeded: verdict = "EXCEEDED"
        }
        return [
            status.budget.label, units.bytes(status.used), units.bytes(status.budget.bytes), left,
            projection.isTrusted ? units.bytes(projection.projected) : "-", duration(projection.observedSeconds), verdict,
        ]
    }

    /// `ifmeter classes`: totals per class, never added up (tunnel traffic also crosses the link beneath it).
    package static func classesText(_ snapshot: Snapshot, units: Units) -> String {
        let title = "ifmeter classes (rx + tx)\n"
        let classes = byClass(snapshot)
        guard !classes.isEmpty else { return title + "No interface counted yet.\n\(Estimate.basis).\n" }
        var table = TextTable([("CLASS", .left), ("TODAY", .right), ("CYCLE", .right), ("SINCE BOOT", .right), ("ALL TIME", .right), ("INTERFACES", .left)])
        for (interfaceClass, members) in classes {
            func total(_ pick: (InterfaceSnapshot) -> LinkCounters) -> String {
                units.bytes(members.reduce(UInt64(0)) { .saturating($0, plus: pick($1).totalBytes) })
            }
            // The retired aggregate's name has a space: "(retired)", last, in a list split on spaces.
            let names = members.filter { $0.presence != .retired }.map(\.name) + (members.contains { $0.presence == .retired } ? ["(retired)"] : [])
            table.append([interfaceClass.displayName, total(\.today), total(\.cycle), total(\.sinceBoot), total(\.allTime), names.joined(separator: " ")])
        }
        return title + table.rendered(fitting: 80) + "\(Estimate.classCaveat).\n\(Estimate.basis).\n"
    }

    static func byClass(_ snapshot: Snapshot) -> [(InterfaceClass, [InterfaceSnapshot])] {
        InterfaceClass.allCases.compactMap { interfaceClass in
            let members = snapshot.interfaces.filter { $0.interfaceClass == interfaceClass.rawValue }
            return members.isEmpty ? nil : (interfaceClass, members)
        }
    }

    // MARK: JSON

    package static func json(_ snapshot: Snapshot) -> JSON {
        .object(header(schema, snapshot) + [
            ("daemon", daemonJSON(snapshot.daemon)),
            ("billing_cycle", cycleJSON(snapshot)),
            ("interfaces", .array(snapshot.interfaces.map { interface in
                guard case .object(var fields) = interfaceJSON(interface) else { preconditionFailure("an interface is an object") }
                fields.insert(("alias", snapshot.aliases[interface.name].map { .string($0) } ?? .null), at: 1)
                return .object(fields)
            })),
            ("budgets", .array(snapshot.budgets.map(budgetJSON))),
        ])
    }

    package static func classesJSON(_ snapshot: Snapshot) -> JSON {
        .object(header("ifmeter.classes/1", snapshot) + [
            ("note", .string(Estimate.classCaveat)),
            ("billing_cycle", cycleJSON(snapshot)),
            ("classes", .array(byClass(snapshot).map { interfaceClass, members in
                func total(_ pick: (InterfaceSnapshot) -> LinkCounters) -> JSON {
                    countersJSON(members.reduce(LinkCounters.zero) { $0 + pick($1) })
                }
                return .object([
                    ("class", .string(interfaceClass.rawValue)),
                    ("interfaces", .array(members.map { .string($0.name) })),
                    ("today", total(\.today)), ("cycle", total(\.cycle)),
                    ("since_boot", total(\.sinceBoot)), ("all_time", total(\.allTime)),
                ])
            })),
        ])
    }

    package static func checkJSON(_ snapshot: Snapshot, exitCode: Int32) -> JSON {
        .object(header("ifmeter.check/1", snapshot) + [
            ("exit_code", .int(Int64(exitCode))),
            ("billing_cycle", cycleJSON(snapshot)),
            ("budgets", .array(snapshot.budgets.map(budgetJSON))),
        ])
    }

    static func header(_ schema: String, _ snapshot: Snapshot) -> [(String, JSON)] {
        [("schema", .string(schema)), ("estimate", .bool(true)), ("basis", .string(Estimate.basis)),
         ("generated", .string(TimeText.utc(snapshot.now))), ("boot_id", .string(snapshot.bootID)),
         ("kernel_read", .bool(snapshot.kernelRead)), ("foreign_namespace", .bool(snapshot.foreignNamespace))]
    }

    static func daemonJSON(_ health: DaemonHealth) -> JSON {
        .object([
            ("running", .bool(health.running)),
            ("last_commit", health.lastCommit.map { .string(TimeText.utc($0)) } ?? .null),
            ("commit_interval_seconds", health.commitInterval.map { .double($0) } ?? .null),
            ("sample_interval_seconds", health.sampleInterval.map { .double($0) } ?? .null),
            ("stale", .bool(health.stale)),
        ])
    }

    static func cycleJSON(_ snapshot: Snapshot) -> JSON {
        .object([
            ("billing_day", .int(Int64(snapshot.billingDay))),
            ("start", .string(TimeText.utc(snapshot.cycleStart))), ("end", .string(TimeText.utc(snapshot.cycleEnd))),
        ])
    }

    static func countersJSON(_ counters: LinkCounters) -> JSON {
        .object([
            ("rx_bytes", .uint(counters.rxBytes)), ("tx_bytes", .uint(counters.txBytes)),
            ("rx_packets", .uint(counters.rxPackets)), ("tx_packets", .uint(counters.txPackets)),
        ])
    }

    static func interfaceJSON(_ interface: InterfaceSnapshot) -> JSON {
        .object([
            ("name", .string(interface.name)), ("class", .string(interface.interfaceClass)),
            ("signal", .string(interface.signal)), ("state", .string(interface.presence.rawValue)),
            ("today", countersJSON(interface.today)), ("yesterday", countersJSON(interface.yesterday)),
            ("cycle", countersJSON(interface.cycle)), ("last_month", countersJSON(interface.lastMonth)),
            ("since_boot", countersJSON(interface.sinceBoot)), ("all_time", countersJSON(interface.allTime)),
            ("live_delta", countersJSON(interface.liveDelta)),
            ("rate", interface.rate.map { rate in
                .object([
                    ("rx_bytes_per_second", .double(rate.rx)), ("tx_bytes_per_second", .double(rate.tx)),
                    ("window_seconds", interface.rateWindow.map { .double($0) } ?? .null),
                ])
            } ?? .null),
            ("last_reset", interface.lastEvent.map(EventsReport.eventJSON) ?? .null),
            ("incomplete", interface.incomplete.map { .string($0) } ?? .null),
            ("imported", interface.imported.map { imported in
                .object([
                    ("source", .string(imported.source)), ("seam", imported.seam.map { .string(TimeText.utc($0)) } ?? .null),
                    ("rx_bytes", .uint(imported.totals.rxBytes)), ("tx_bytes", .uint(imported.totals.txBytes)),
                ])
            } ?? .null),
        ])
    }

    static func budgetJSON(_ status: BudgetStatus) -> JSON {
        let kind: String
        switch status.budget.target {
        case .interfaceClass: kind = "class"
        case .interface: kind = "interface"
        }
        return .object([
            ("target", .string(status.budget.label)), ("target_kind", .string(kind)),
            ("interface_counted", status.interfaceCounted.map { .bool($0) } ?? .null),
            ("budget_bytes", .uint(status.budget.bytes)), ("used_bytes", .uint(status.used)),
            ("remaining_bytes", .int(status.remaining)),
            // As the text's "-": no figure before a day is observed.
            ("projected_bytes", status.projection.isTrusted ? .uint(status.projection.projected) : .null),
            ("projection", .string("linear")), ("confidence", .string(status.projection.confidence.rawValue)),
            ("observed_since", .string(TimeText.utc(status.projection.observedSince))),
            ("observed_seconds", .int(status.projection.observedSeconds)),
            ("state", .string(status.state.rawValue)),
            ("period", .string(status.budget.period.rawValue)), ("direction", .string(status.budget.direction.rawValue)),
            ("period_start", .string(TimeText.utc(status.periodStart))), ("period_end", .string(TimeText.utc(status.periodEnd))),
            ("billing_day", .int(Int64(status.billingDay))),
        ])
    }
}
