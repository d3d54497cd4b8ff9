/// One link with what ifmeter makes of it.
package struct ClassifiedLink: Sendable {
    package var sample: LinkSample
    package var classification: Classification

    package init(sample: LinkSample, classification: Classification) {
        self.sample = sample
        self.classification = classification
    }

    package func isWatched(by classes: Set<InterfaceClass>) -> Bool {
        classification.interfaceClass.map(classes.contains) ?? false
    }
}

/// `ifmeter interfaces`: the links, their class, the deciding signal and their 64-bit counters.
package enum InterfacesReport {
    package static let schema = "ifmeter.interfaces/1"

    /// Within 80 columns: a link a line, its signal wrapped under itself; ifindex, kind, packets, errors
    /// and drops are in --json.
    package static func table(_ links: [ClassifiedLink], units: Units) -> String {
        var table = TextTable([
            ("INTERFACE", .left), ("CLASS", .left), ("STATE", .left), ("RX", .right), ("TX", .right), ("SIGNAL", .left),
        ])
        for link in links {
            table.append([
                link.sample.name, link.classification.interfaceClass?.displayName ?? "ignored", link.sample.operState.name,
                units.bytes(link.sample.counters.rxBytes), units.bytes(link.sample.counters.txBytes),
                link.classification.signal.description,
            ])
        }
        return table.rendered(fitting: 80) + "RX, TX: since each interface was created.\n\(Estimate.basis).\n"
    }

    /// What to say when nothing is counted: the links present, their class and why, and the `Watch=` line
    /// that would count them. Wired is offered before other, which also counts bridges, veths and the like.
    package static func watchHint(unwatched: [ClassifiedLink], watched: Set<InterfaceClass>, configPath: String) -> String {
        var text = "Watch=\(InterfaceClass.spelled(watched)) counts none of the interfaces here"
        let countable = unwatched.filter { $0.classification.interfaceClass != nil }.sorted { NaturalOrder.less($0.sample.name, $1.sample.name) }
        if countable.isEmpty {
            let ignored = unwatched.map(\.sample.name)
            return text + (ignored.isEmpty ? ".\n" : " (\(NaturalOrder.sorted(ignored).joined(separator: " ")): loopback or ignored, never counted).\n")
        }
        text += ":\n"
        var table = TextTable([("", .left), ("", .left), ("", .left)])
        for link in countable {
            table.append([link.sample.name, link.classification.interfaceClass?.displayName ?? "ignored", link.classification.signal.description])
        }
        text += table.rendered().split(separator: "\n", omittingEmptySubsequences: false).dropFirst().dropLast().map { "  " + $0 }.joined(separator: "\n") + "\n"
        let offered: InterfaceClass = countable.contains { $0.classification.interfaceClass == .wired } ? .wired : .other
        let counted = countable.filter { $0.classification.interfaceClass == offered }.map(\.sample.name)
        let line = InterfaceClass.spelled(watched.union([offered]))
        return text + "To count \(counted.joined(separator: " ")), set in \(configPath) and reload the daemon (systemctl reload ifmeterd, or SIGHUP to ifmeterd):\n"
            + "  [Interfaces]\n  Watch=\(line)\n" + "or count one by name, as vnStat's --add: ifmeter watch \(counted[0])\n"
    }

    package static func json(_ links: [ClassifiedLink]) -> JSON {
        .object([
            ("schema", .string(schema)),
            ("estimate", .bool(true)),
            ("basis", .string(Estimate.basis)),
            ("interfaces", .array(links.map(json))),
        ])
    }

    static func json(_ link: ClassifiedLink) -> JSON {
        let c = link.sample.counters
        return .object([
            ("name", .string(link.sample.name)),
            ("class", link.classification.interfaceClass.map { .string($0.rawValue) } ?? .null),
            ("ignored", .bool(link.classification.interfaceClass == nil)),
            ("signal", .string(link.classification.signal.description)),
            ("ifindex", .int(Int64(link.sample.ifindex))),
            ("kind", .string(link.sample.kind)),
            ("arp_type", .int(Int64(link.sample.arpType))),
            ("operstate", .string(link.sample.operState.name)),
            ("up", .bool(link.sample.isUp)),
            ("counters", .object([
                ("rx_bytes", .uint(c.rxBytes)), ("tx_bytes", .uint(c.txBytes)),
                ("rx_packets", .uint(c.rxPackets)), ("tx_packets", .uint(c.txPackets)),
                ("rx_errors", .uint(c.rxErrors)), ("tx_errors", .uint(c.txErrors)),
                ("rx_dropped", .uint(c.rxDropped)), ("tx_dropped", .uint(c.txDropped)),
            ])),
        ])
    }
}
