/// One row of `ifmeter live`: rates over the last refresh, and what passed since the screen started.
package struct LiveRow: Sendable, Hashable {
    package var name: String
    package var interfaceClass: String
    /// Bytes and packets per second over the last refresh.
    package var rate: (rxBytes: Double, txBytes: Double, rxPackets: Double, txPackets: Double)
    /// Counted since the session began (rx, tx bytes and packets).
    package var session: LinkCounters

    package static func == (lhs: LiveRow, rhs: LiveRow) -> Bool {
        lhs.name == rhs.name && lhs.interfaceClass == rhs.interfaceClass && lhs.session == rhs.session
            && lhs.rate.rxBytes == rhs.rate.rxBytes && lhs.rate.txBytes == rhs.rate.txBytes
            && lhs.rate.rxPackets == rhs.rate.rxPackets && lhs.rate.txPackets == rhs.rate.txPackets
    }

    package func hash(into hasher: inout Hasher) { hasher.combine(name) }
}

/// The arithmetic of `live`, apart from the kernel and the clock. Deltas follow rule 6 per ifindex
/// (a counter that went down counts from zero), so a recreated link never yields a huge rate.
package struct LiveSession: Sendable {
    package private(set) var totals: [String: LinkCounters] = [:]
    package private(set) var classes: [String: String] = [:]
    package private(set) var seconds: Double = 0

    package init() {}

    /// The rows for one refresh of the links `include` accepts (with their class), merged by `selection`.
    package mutating func refresh(
        from before: [LinkSample], to after: [LinkSample], elapsed: Double, selection: InterfaceSelection,
        include: (LinkSample) -> String?
    ) -> [LiveRow] {
        seconds += elapsed
        let previous = Dictionary(before.map { ($0.ifindex, $0.counters) }, uniquingKeysWith: { first, _ in first })
        var rows: [LiveRow] = []
        for link in after {
            guard let interfaceClass = include(link) else { continue }
            var delta = LinkCounters.zero
            if let old = previous[link.ifindex] {
                func step(_ a: UInt64, _ b: UInt64) -> UInt64 { CounterStep.between(a, b, width: .bits64).delta }
                delta = LinkCounters(
                    rxBytes: step(old.rxBytes, link.counters.rxBytes), txBytes: step(old.txBytes, link.counters.txBytes),
                    rxPackets: step(old.rxPackets, link.counters.rxPackets), txPackets: step(old.txPackets, link.counters.txPackets))
            }
            totals[link.name, default: .zero] += delta
            classes[link.name] = interfaceClass
            let per = elapsed > 0 ? 1 / elapsed : 0
            rows.append(LiveRow(
                name: link.name, interfaceClass: interfaceClass,
                rate: (Double(delta.rxBytes) * per, Double(delta.txBytes) * per, Double(delta.rxPackets) * per, Double(delta.txPackets) * per),
                session: totals[link.name] ?? .zero))
        }
        return selection.apply(rows, name: \.name, relabel: { row, label in
            var row = row
            row.name = label
            return row
        }, key: \.name, combine: { a, b in
            var merged = a
            merged.interfaceClass = InterfaceSelection.mergedClass(a.interfaceClass, b.interfaceClass)
            merged.rate = (a.rate.rxBytes + b.rate.rxBytes, a.rate.txBytes + b.rate.txBytes, a.rate.rxPackets + b.rate.rxPackets, a.rate.txPackets + b.rate.txPackets)
            merged.session += b.session
            return merged
        }).sorted { NaturalOrder.less($0.name, $1.name) }
    }

    /// The table `live` redraws.
    package static func table(_ rows: [LiveRow], units: Units) -> String {
        var table = TextTable([
            ("INTERFACE", .left), ("RX", .right), ("TX", .right), ("RX PKT/S", .right), ("TX PKT/S", .right), ("RX SESSION", .right), ("TX SESSION", .right),
        ])
        for row in rows {
            table.append([
                row.name, units.rate(bytesPerSecond: row.rate.rxBytes), units.rate(bytesPerSecond: row.rate.txBytes),
                packets(row.rate.rxPackets), packets(row.rate.txPackets), units.bytes(row.session.rxBytes), units.bytes(row.session.txBytes),
            ])
        }
        return table.rendered() + (rows.isEmpty ? "No watched interface up; 'ifmeter interfaces --all' lists them all.\n" : "")
    }

    /// What `live` prints when it stops: each interface's session totals and average rates.
    package func summary(selection: InterfaceSelection, units: Units) -> String {
        let seconds = max(self.seconds, 0.001)
        let rows = selection.apply(totals.map { (name: $0.key, counters: $0.value) }, name: \.name, relabel: { ($1, $0.counters) },
                                   key: \.name, combine: { ($0.name, $0.counters + $1.counters) })
            .sorted { NaturalOrder.less($0.name, $1.name) }
        var table = TextTable([("INTERFACE", .left), ("RX", .right), ("TX", .right), ("RX AVG", .right), ("TX AVG", .right), ("PACKETS", .right)])
        for row in rows {
            table.append([
                row.name, units.bytes(row.counters.rxBytes), units.bytes(row.counters.txBytes),
                units.rate(bytesPerSecond: Double(row.counters.rxBytes) / seconds), units.rate(bytesPerSecond: Double(row.counters.txBytes) / seconds),
                String(row.counters.rxPackets + row.counters.txPackets),
            ])
        }
        return "live for \(Units.fixed(self.seconds, decimals: 1)) s, \(Estimate.basis):\n" + table.rendered()
    }

    static func packets(_ perSecond: Double) -> String {
        perSecond < 10 ? Units.fixed(perSecond, decimals: 1) : String(Int64(perSecond.rounded()))
    }
}
