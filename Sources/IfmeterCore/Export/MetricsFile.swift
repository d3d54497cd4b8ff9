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

/// What the daemon publishes after a sample.
package struct MetricsSnapshot: Sendable {
    package var interfaces: [MetricsInterface]
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
    private var floors: [String: UInt64] = [:]

    package init(path: String) {
        self.path = path
    }

    /// Renders and replaces the file atomically, unsynced: it is rewritten every sample, where fsyncs would
    /// force a filesystem journal commit each time; after a power cut the first sample rewrites it.
    package func write(_ snapshot: MetricsSnapshot) throws {
        let bytes = Array(render(snapshot).utf8)
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

    package func render(_ snapshot: MetricsSnapshot) -> String {
        var output = ""
        let interfaces = snapshot.interfaces.sorted { $0.device < $1.device }
        let labels = interfaces.map { "device=\"\(Self.escapeLabel($0.device))\",class=\"\($0.info.interfaceClass.rawValue)\"" }

        let counterFamilies: [(String, String, KeyPath<LinkCounters, UInt64>)] = [
            ("receive_bytes_total", "Bytes received, accumulated across interface recreation, driver resets and reboots.", \.rxBytes),
            ("transmit_bytes_total", "Bytes transmitted, accumulated across interface recreation, driver resets and reboots.", \.txBytes),
            ("receive_packets_total", "Packets received (not wire packets: GRO/GSO), accumulated.", \.rxPackets),
            ("transmit_packets_total", "Packets transmitted (not wire packets: GRO/GSO), accumulated.", \.txPackets),
            ("receive_errors_total", "Receive errors, accumulated.", \.rxErrors),
            ("transmit_errors_total", "Transmit errors, accumulated.", \.txErrors),
            ("receive_drop_total", "Received packets dropped, accumulated.", \.rxDropped),
            ("transmit_drop_total", "Transmitted packets dropped, accumulated.", \.txDropped),
        ]
        for (name, help, field) in counterFamilies {
            family(&output, name, help, "counter")
            for (index, interface) in interfaces.enumerated() {
                counter(&output, "ifmeter_\(name){\(labels[index])}", interface.totals[keyPath: field])
            }
        }
        family(&output, "build_info", "ifmeter's version (value always 1). \(Self.disclaimer)", "gauge", note: false)
        output += "ifmeter_build_info{version=\"\(Self.escapeLabel(Version.number))\"} 1\n"
        family(&output, "interface_info", "Interface metadata: link kind and the signal that decided its class (value always 1).", "gauge")
        for interface in interfaces {
            output += "ifmeter_interface_info{device=\"\(Self.escapeLabel(interface.device))\",class=\"\(interface.info.interfaceClass.rawValue)\",kind=\"\(Self.escapeLabel(interface.info.kind))\",signal=\"\(Self.escapeLabel(interface.info.signal))\"} 1\n"
        }
        family(&output, "interface_ifindex", "The kernel ifindex of the interface's current life; absent while it is gone.", "gauge")
        for (index, interface) in interfaces.enumerated() {
            if let ifindex = interface.ifindex { output += "ifmeter_interface_ifindex{\(labels[index])} \(ifindex)\n" }
        }
        family(&output, "resets_total", "Counter resets seen (recreation, reboot, driver reset, lost events...), by reason.", "counter")
        for (index, interface) in interfaces.enumerated() {
            for (reason, count) in interface.resets.sorted(by: { $0.key < $1.key }) {
                counter(&output, "ifmeter_resets_total{\(labels[index]),reason=\"\(Self.escapeLabel(reason))\"}", count)
            }
        }
        family(&output, "last_sample_timestamp_seconds", "Unix time of the daemon's last counter sample.", "gauge")
        output += "ifmeter_last_sample_timestamp_seconds \(Self.number(snapshot.lastSample))\n"
        family(&output, "sample_duration_seconds", "Wall time the last sample pass took.", "gauge")
        output += "ifmeter_sample_duration_seconds \(Self.number(snapshot.sampleDuration))\n"
        family(&output, "store_write_errors_total", "Failed commits to the store (deltas are kept in memory and retried).", "counter")
        counter(&output, "ifmeter_store_write_errors_total", snapshot.storeWriteErrors)
        if let lastCommit = snapshot.lastCommit {
            family(&output, "last_commit_timestamp_seconds", "Unix time of the daemon's last commit to its store.", "gauge")
            output += "ifmeter_last_commit_timestamp_seconds \(lastCommit)\n"
        }
        return output
    }

    private func family(_ output: inout String, _ name: String, _ help: String, _ type: String, note: Bool = true) {
        output += "# HELP ifmeter_\(name) \(Self.escapeHelp(note ? help + " " + Self.estimateNote : help))\n# TYPE ifmeter_\(name) \(type)\n"
    }

    private func counter(_ output: inout String, _ series: String, _ value: UInt64) {
        let published = max(value, floors[series] ?? 0)
        floors[series] = published
        output += "\(series) \(published)\n"
    }

    static func escapeLabel(_ text: String) -> String { text.escaping(EscapeTable.prometheusLabel) }

    static func escapeHelp(_ text: String) -> String { text.escaping(EscapeTable.prometheusHelp) }

    static func number(_ value: Double) -> String {
        value.isFinite ? Units.fixed(value, decimals: 6) : "0"
    }
}
