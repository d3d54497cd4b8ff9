/// `ifmeter status`, `ifmeter classes` and `ifmeter check`: pure renderings
/// of a snapshot.
public enum StatusReport {
    public static let schema = "ifmeter.status/1"

    // MARK: Text

    public static func text(_ snapshot: Snapshot, units: Units) -> String {
        var output = "ifmeter status at \(TimeText.moment(snapshot.now)): \(Estimate.basis)\n"
        output += daemonLine(snapshot) + "\n"
        if !snapshot.kernelRead { output += "kernel counters could not be read: figures are the store's as of its last commit\n" }
        if snapshot.interfaces.isEmpty { output += "\nNo interface counted yet.\n" }
        for interface in snapshot.interfaces {
            output += "\n\(interface.name)  \(displayClass(interface.interfaceClass)) (\(interface.signal)), \(interface.presence.rawValue)\n"
            var table = TextTable([("", .left), ("rx", .right), ("tx", .right), ("total", .right), ("", .left)])
            func row(_ label: String, _ counters: LinkCounters, _ note: String = "") {
                table.append([label, units.bytes(counters.rxBytes), units.bytes(counters.txBytes), units.bytes(counters.rxBytes + counters.txBytes), note])
            }
            row("today", interface.today)
            row("cycle", interface.cycle, "since \(TimeText.format(snapshot.cycleStart, "%Y-%m-%d"))")
            row("since boot", interface.sinceBoot)
            row("all time", interface.allTime)
            if let rate = interface.rate {
                table.append(["rate", units.rate(bytesPerSecond: rate.rx), units.rate(bytesPerSecond: rate.tx), units.rate(bytesPerSecond: rate.rx + rate.tx), ""])
            }
            output += table.rendered().split(separator: "\n").map { "  " + $0 }.joined(separator: "\n") + "\n"
            if let event = interface.lastEvent {
                output += "  last reset  \(TimeText.moment(event.time)) \(event.reason), loss \(event.loss): \(event.detail)\n"
            } else {
                output += "  last reset  none\n"
            }
        }
        if !snapshot.budgets.isEmpty { output += "\n" + budgetLines(snapshot, units: units) }
        return output
    }

    static func displayClass(_ raw: String) -> String { InterfaceClass(rawValue: raw)?.displayName ?? raw }

    static func daemonLine(_ snapshot: Snapshot) -> String {
        let health = snapshot.daemon
        guard let last = health.lastCommit else { return "daemon: no commit yet" }
        let age = snapshot.now - last
        let every = health.commitInterval.map { ", commits every \(Int($0)) s" } ?? ""
        let state = health.running ? "running" : "not running"
        if health.stale {
            return "daemon: \(state), STALE since \(TimeText.moment(last)) (no commit for \(age) s\(every))"
        }
        return "daemon: \(state), last commit \(TimeText.moment(last)) (\(age) s ago\(every))"
    }

    static func budgetLines(_ snapshot: Snapshot, units: Units) -> String {
        var output = "budgets, billing cycle \(TimeText.format(snapshot.cycleStart, "%Y-%m-%d")) to \(TimeText.format(snapshot.cycleEnd, "%Y-%m-%d")) (rx + tx):\n"
        var table = TextTable([("", .left), ("used", .right), ("budget", .right), ("left", .right), ("projected", .right), ("", .left)])
        for status in snapshot.budgets {
            let left = status.remaining >= 0 ? units.bytes(UInt64(status.remaining)) : "-" + units.bytes(UInt64(-status.remaining))
            let verdict: String
            switch status.state {
            case .ok: verdict = "ok"
            case .projectedOver: verdict = "projected over budget by the end of the cycle"
            case .exceeded: verdict = "EXCEEDED"
            }
            table.append([status.budget.label, units.bytes(status.used), units.bytes(status.budget.bytes), left, units.bytes(status.projected), verdict])
        }
        return output + table.rendered().split(separator: "\n").map { "  " + $0 }.joined(separator: "\n") + "\n"
            + "  projected = linear projection of this cycle's use to its end\n"
    }

    /// `ifmeter classes`: totals per class. Tunnel traffic also crosses the
    /// link it rides on, so the classes are never added up.
    public static func classesText(_ snapshot: Snapshot, units: Units) -> String {
        var table = TextTable([("CLASS", .left), ("TODAY", .right), ("CYCLE", .right), ("SINCE BOOT", .right), ("ALL TIME", .right), ("INTERFACES", .left)])
        for (interfaceClass, members) in byClass(snapshot) {
            func total(_ pick: (InterfaceSnapshot) -> LinkCounters) -> String {
                units.bytes(members.reduce(UInt64(0)) { .saturating($0, plus: .saturating(pick($1).rxBytes, plus: pick($1).txBytes)) })
            }
            table.append([interfaceClass.displayName, total(\.today), total(\.cycle), total(\.sinceBoot), total(\.allTime), members.map(\.name).joined(separator: " ")])
        }
        return "ifmeter classes (rx + tx): \(Estimate.basis)\n" + table.rendered() + "Note: \(Estimate.classCaveat).\n"
    }

    static func byClass(_ snapshot: Snapshot) -> [(InterfaceClass, [InterfaceSnapshot])] {
        InterfaceClass.allCases.compactMap { interfaceClass in
            let members = snapshot.interfaces.filter { $0.interfaceClass == interfaceClass.rawValue }
            return members.isEmpty ? nil : (interfaceClass, members)
        }
    }

    // MARK: JSON

    public static func json(_ snapshot: Snapshot) -> JSON {
        .object(header(schema, snapshot) + [
            ("daemon", daemonJSON(snapshot.daemon)),
            ("billing_cycle", cycleJSON(snapshot)),
            ("interfaces", .array(snapshot.interfaces.map(interfaceJSON))),
            ("budgets", .array(snapshot.budgets.map(budgetJSON))),
        ])
    }

    public static func classesJSON(_ snapshot: Snapshot) -> JSON {
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

    public static func checkJSON(_ snapshot: Snapshot, exitCode: Int32) -> JSON {
        .object(header("ifmeter.check/1", snapshot) + [
            ("exit_code", .int(Int64(exitCode))),
            ("billing_cycle", cycleJSON(snapshot)),
            ("budgets", .array(snapshot.budgets.map(budgetJSON))),
        ])
    }

    static func header(_ schema: String, _ snapshot: Snapshot) -> [(String, JSON)] {
        [("schema", .string(schema)), ("estimate", .bool(true)), ("basis", .string(Estimate.basis)),
         ("generated", .string(TimeText.utc(snapshot.now))), ("boot_id", .string(snapshot.bootID)),
         ("kernel_read", .bool(snapshot.kernelRead))]
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
            ("today", countersJSON(interface.today)), ("cycle", countersJSON(interface.cycle)),
            ("since_boot", countersJSON(interface.sinceBoot)), ("all_time", countersJSON(interface.allTime)),
            ("live_delta", countersJSON(interface.liveDelta)),
            ("rate", interface.rate.map { .object([("rx_bytes_per_second", .double($0.rx)), ("tx_bytes_per_second", .double($0.tx))]) } ?? .null),
            ("last_reset", interface.lastEvent.map(EventsReport.eventJSON) ?? .null),
            ("incomplete", interface.incomplete.map { .string($0) } ?? .null),
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
            ("budget_bytes", .uint(status.budget.bytes)), ("used_bytes", .uint(status.used)),
            ("remaining_bytes", .int(status.remaining)), ("projected_bytes", .uint(status.projected)),
            ("projection", .string("linear")), ("state", .string(status.state.rawValue)),
        ])
    }
}
