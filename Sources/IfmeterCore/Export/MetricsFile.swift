import Glibc

package struct MetricsInterface: Sendable {
    package var device: String
    package var info: InterfaceInfo
    /// The current life's ifindex, nil when gone: a gauge of its own, since a label would start a
    /// new series at every recreation of a tunnel.
    package var ifindex: Int32?
    /// The daemon's accumulated totals (never the raw kernel counters).
    package var totals: LinkCounters
    /// Reset events so far, by reason.
    package var resets: [String: UInt64]

    package init(device: String, info: InterfaceInfo, ifindex: Int32?, totals: LinkCounters, resets: [String: UInt64]) {
        self.device = device
        self.info = info
        self.ifindex = ifindex
        self.totals = totals
        self.resets = resets
    }
}

/// A budget and its use in the current period, as the metrics file shows it.
package struct MetricsBudget: Sendable, Equatable {
    package var budget: Budget
    package var used: UInt64
    package var periodStart: Int64
    package var periodEnd: Int64

    package init(budget: Budget, used: UInt64, periodStart: Int64, periodEnd: Int64) {
        self.budget = budget
        self.used = used
        self.periodStart = periodStart
        self.periodEnd = periodEnd
    }
}

/// What the daemon publishes after a sample.
package struct MetricsSnapshot: Sendable {
    package var interfaces: [MetricsInterface]
    package var budgets: [MetricsBudget] = []
    /// Unix time of the sample.
    package var lastSample: Double
    package var sampleDuration: Double
    package var storeWriteErrors: UInt64
    package var lastCommit: Int64?

    package init(interfaces: [MetricsInterface], lastSample: Double, sampleDuration: Double, storeWriteErrors: UInt64, lastCommit: Int64?) {
        self.interfaces = interfaces
        self.lastSample = lastSample
        self.sampleDuration = sampleDuration
        self.storeWriteErrors = storeWriteErrors
        self.lastCommit = lastCommit
    }
}

/// The Prometheus text file (format 0.0.4) for node_exporter's textfile collector. Counters never go down
/// (Prometheus reads a decrease as a reset): each series keeps a floor. The file is never read back, lest
/// one planted there pin, hang or bloat the daemon: across restarts, publish only committed totals.
package final class MetricsFile {
    package let path: String
    /// Per device, what its lines repeat every sample (escaped once) and the floor of each of its counters.
    private var series: [String: DeviceSeries] = [:]
    private var storeWriteErrorsFloor: UInt64 = 0
    private var lastSize = 0

    private struct DeviceSeries {
        var info: InterfaceInfo
        /// `device="...",class="..."`
        var labels: [UInt8]
        var infoLine: [UInt8]
        var floors: [UInt64]
        var resets: [(reason: String, labels: [UInt8], floor: UInt64)] = []

        init(device: String, info: InterfaceInfo) {
            self.info = info
            let labels = "device=\"\(MetricsFile.escapeLabel(device))\",class=\"\(info.interfaceClass.rawValue)\""
            self.labels = Array(labels.utf8)
            infoLine = Array("ifmeter_interface_info{\(labels),kind=\"\(MetricsFile.escapeLabel(info.kind))\",signal=\"\(MetricsFile.escapeLabel(info.signal))\"} 1\n".utf8)
            floors = Array(repeating: 0, count: MetricsFile.counterFamilies.count)
        }

        mutating func resetIndex(_ reason: String) -> Int {
            if let index = resets.firstIndex(where: { $0.reason == reason }) { return index }
            resets.append((reason, labels + Array(",reason=\"\(MetricsFile.escapeLabel(reason))\"".utf8), 0))
            return resets.count - 1
        }
    }

    package init(path: String) {
        self.path = path
    }

    /// Renders and replaces the file atomically, unsynced: it is rewritten every sample, where fsyncs would
    /// force a filesystem journal commit each time; after a power cut the first sample rewrites it.
    package func write(_ snapshot: MetricsSnapshot) throws {
        let bytes = renderBytes(snapshot)
        // What the daemon keeps in /run is bounded, and the relay copies nothing larger anyway.
        guard bytes.count <= MetricsRelay.sizeLimit else {
            throw SystemError("write", path: path, errno: EFBIG, explanation: "\(bytes.count) bytes, more than the \(MetricsRelay.sizeLimit) a metrics file may hold")
        }
        try FileSystem.writeAtomically(bytes, to: path, mode: 0o644, synced: false)
    }

    /// Said on every family; the whole caveat once, on ifmeter_build_info.
    static let estimateNote = "Estimate from kernel interface counters."
    static let disclaimer =
        "Estimate from kernel interface counters: every ifmeter_ figure is one, not per-application, not billing-grade; tunnel traffic also crosses the link beneath it."

    private struct CounterFamily: Sendable {
        var header: [UInt8]
        /// `ifmeter_NAME{`
        var prefix: [UInt8]
        var value: @Sendable (LinkCounters) -> UInt64

        init(_ name: String, _ help: String, _ value: @escaping @Sendable (LinkCounters) -> UInt64) {
            header = MetricsFile.header(name, help, "counter")
            prefix = Array("ifmeter_\(name){".utf8)
            self.value = value
        }
    }

    private static let counterFamilies = [
        CounterFamily("receive_bytes_total", "Bytes received, accumulated across interface recreation, driver resets and reboots.", { $0.rxBytes }),
        CounterFamily("transmit_bytes_total", "Bytes transmitted, accumulated across interface recreation, driver resets and reboots.", { $0.txBytes }),
        CounterFamily("receive_packets_total", "Packets received (not wire packets: GRO/GSO), accumulated.", { $0.rxPackets }),
        CounterFamily("transmit_packets_total", "Packets transmitted (not wire packets: GRO/GSO), accumulated.", { $0.txPackets }),
        CounterFamily("receive_errors_total", "Receive errors, accumulated.", { $0.rxErrors }),
        CounterFamily("transmit_errors_total", "Transmit errors, accumulated.", { $0.txErrors }),
        CounterFamily("receive_drop_total", "Received packets dropped, accumulated.", { $0.rxDropped }),
        CounterFamily("transmit_drop_total", "Transmitted packets dropped, accumulated.", { $0.txDropped }),
    ]
    private static let buildInfo = header("build_info", "ifmeter's version (value always 1). \(disclaimer)", "gauge", note: false)
        + Array("ifmeter_build_info{version=\"\(escapeLabel(Version.number))\"} 1\n".utf8)
    private static let interfaceInfo = header("interface_info", "Interface metadata: link kind and the signal that decided its class (value always 1).", "gauge")
    private static let ifindexHeader = header("interface_ifindex", "The kernel ifindex of the interface's current life; absent while it is gone.", "gauge")
    private static let ifindexPrefix = Array("ifmeter_interface_ifindex{".utf8)
    private static let resetsHeader = header("resets_total", "Counter resets seen (recreation, reboot, driver reset, lost events...), by reason.", "counter")
    private static let resetsPrefix = Array("ifmeter_resets_total{".utf8)

    package func render(_ snapshot: MetricsSnapshot) -> String { String(decoding: renderBytes(snapshot), as: UTF8.self) }

    /// One pass into one buffer, since the daemon renders this every sample.
    func renderBytes(_ snapshot: MetricsSnapshot) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(lastSize + lastSize / 8)
        let interfaces = snapshot.interfaces.sorted { $0.device < $1.device }
        // A device whose class changed starts new series, from zero.
        var rows = interfaces.map { interface in
            if let known = series[interface.device], known.info == interface.info { return known }
            var fresh = DeviceSeries(device: interface.device, info: interface.info)
            if let known = series[interface.device], known.info.interfaceClass == interface.info.interfaceClass {
                (fresh.floors, fresh.resets) = (known.floors, known.resets)
            }
            return fresh
        }
        for (familyIndex, family) in Self.counterFamilies.enumerated() {
            output += family.header
            for index in interfaces.indices {
                let published = max(family.value(interfaces[index].totals), rows[index].floors[familyIndex])
                rows[index].floors[familyIndex] = published
                Self.sample(&output, family.prefix, rows[index].labels, published)
            }
        }
        output += Self.buildInfo
        output += Self.interfaceInfo
        for row in rows { output += row.infoLine }
        output += Self.ifindexHeader
        for index in interfaces.indices {
            if let ifindex = interfaces[index].ifindex { Self.sample(&output, Self.ifindexPrefix, rows[index].labels, UInt64(clamping: ifindex)) }
        }
        output += Self.resetsHeader
        for index in interfaces.indices {
            for (reason, count) in interfaces[index].resets.sorted(by: { $0.key < $1.key }) {
                let reset = rows[index].resetIndex(reason)
                rows[index].resets[reset].floor = max(count, rows[index].resets[reset].floor)
                Self.sample(&output, Self.resetsPrefix, rows[index].resets[reset].labels, rows[index].resets[reset].floor)
            }
        }
        for index in interfaces.indices { series[interfaces[index].device] = rows[index] }
        output += Self.header("last_sample_timestamp_seconds", "Unix time of the daemon's last counter sample.", "gauge")
        output += "ifmeter_last_sample_timestamp_seconds \(Self.number(snapshot.lastSample))\n".utf8
        output += Self.header("sample_duration_seconds", "Wall time the last sample pass took.", "gauge")
        output += "ifmeter_sample_duration_seconds \(Self.number(snapshot.sampleDuration))\n".utf8
        output += Self.header("store_write_errors_total", "Failed commits to the store (deltas are kept in memory and retried).", "counter")
        storeWriteErrorsFloor = max(snapshot.storeWriteErrors, storeWriteErrorsFloor)
        output += "ifmeter_store_write_errors_total \(storeWriteErrorsFloor)\n".utf8
        if let lastCommit = snapshot.lastCommit {
            output += Self.header("last_commit_timestamp_seconds", "Unix time of the daemon's last commit to its store.", "gauge")
            output += "ifmeter_last_commit_timestamp_seconds \(lastCommit)\n".utf8
        }
        if !snapshot.budgets.isEmpty { renderBudgets(snapshot.budgets, into: &output) }
        lastSize = output.count
        return output
    }

    private static let budgetFamilies: [(header: [UInt8], prefix: [UInt8], value: @Sendable (MetricsBudget) -> UInt64)] = [
        (header("budget_bytes", "A [Budgets] limit, by class or device, period (hour, day, month, cycle, year) and direction (rx, tx, total).", "gauge"),
         Array("ifmeter_budget_bytes{".utf8), { $0.budget.bytes }),
        (header("budget_used_bytes", "Bytes counted against the budget in its current period, as ifmeter check counts them.", "gauge"),
         Array("ifmeter_budget_used_bytes{".utf8), { $0.used }),
        (header("budget_period_start_timestamp_seconds", "Unix time the budget's current period began (period=\"cycle\": the billing cycle's start).", "gauge"),
         Array("ifmeter_budget_period_start_timestamp_seconds{".utf8), { UInt64(clamping: $0.periodStart) }),
        (header("budget_period_end_timestamp_seconds", "Unix time the budget's current period ends.", "gauge"),
         Array("ifmeter_budget_period_end_timestamp_seconds{".utf8), { UInt64(clamping: $0.periodEnd) }),
    ]

    /// A budget's series are named by what it limits: `device` as the interface families, or `class`.
    static func budgetLabels(_ budget: Budget) -> [UInt8] {
        let target = switch budget.target {
        case .interface(let name): "device=\"\(escapeLabel(name))\""
        case .interfaceClass(let interfaceClass): "class=\"\(interfaceClass.rawValue)\""
        }
        return Array("\(target),period=\"\(budget.period.rawValue)\",direction=\"\(budget.direction.rawValue)\"".utf8)
    }

    /// The labels of the budgets last rendered, escaped once: they change only at a reload.
    private var budgetLabelCache: (budgets: [Budget], labels: [[UInt8]]) = ([], [])

    private func renderBudgets(_ budgets: [MetricsBudget], into output: inout [UInt8]) {
        if !budgetLabelCache.budgets.elementsEqual(budgets.lazy.map(\.budget)) {
            budgetLabelCache = (budgets.map(\.budget), budgets.map { Self.budgetLabels($0.budget) })
        }
        let labels = budgetLabelCache.labels
        for family in Self.budgetFamilies {
            output += family.header
            for (budget, labels) in zip(budgets, labels) { Self.sample(&output, family.prefix, labels, family.value(budget)) }
        }
    }

    private static func header(_ name: String, _ help: String, _ type: String, note: Bool = true) -> [UInt8] {
        Array("# HELP ifmeter_\(name) \(escapeHelp(note ? help + " " + estimateNote : help))\n# TYPE ifmeter_\(name) \(type)\n".utf8)
    }

    /// `PREFIX LABELS} VALUE`, the value's digits written straight into the buffer.
    private static func sample(_ output: inout [UInt8], _ prefix: [UInt8], _ labels: [UInt8], _ value: UInt64) {
        output += prefix
        output += labels
        output += "} ".utf8
        let first = output.count
        var rest = value
        repeat {
            output.append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        output[first...].reverse()
        output.append(UInt8(ascii: "\n"))
    }

    static func escapeLabel(_ text: String) -> String { text.escaping(EscapeTable.prometheusLabel) }

    static func escapeHelp(_ text: String) -> String { text.escaping(EscapeTable.prometheusHelp) }

    static func number(_ value: Double) -> String {
        value.isFinite ? Units.fixed(value, decimals: 6) : "0"
    }
}
