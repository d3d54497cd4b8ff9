/// One row of `ifmeter live`: rates over the last refresh, and what passed since the screen started.
package struct LiveRow: Sendable, Hashable {
    package var name: String
    package var interfaceClass: String
    /// Bytes and packets per second over the last refresh.
    package var rate: (rxBytes: Double, txBytes: Double, rxPackets: Double, txPackets: Double)
    /// Counted since the session began (rx, tx bytes and packets).
    package var session: LinkCounters
    /// Whether the rate is one: a link first seen at this refresh has no interval behind it.
    package var measured = true

    package static func == (lhs: LiveRow, rhs: LiveRow) -> Bool {
        lhs.name == rhs.name && lhs.interfaceClass == rhs.interfaceClass && lhs.session == rhs.session && lhs.measured == rhs.measured
            && lhs.rate.rxBytes == rhs.rate.rxBytes && lhs.rate.txBytes == rhs.rate.txBytes
            && lhs.rate.rxPackets == rhs.rate.rxPackets && lhs.rate.txPackets == rhs.rate.txPackets
    }

    package func hash(into hasher: inout Hasher) { hasher.combine(name) }
}

/// The least and greatest of the rates one interface showed over a session, as vnStat -l's summary has them.
package struct RateExtremes: Sendable, Hashable {
    package private(set) var least: Double?
    package private(set) var greatest: Double?

    package init() {}

    package mutating func add(_ rate: Double) {
        least = min(least ?? rate, rate)
        greatest = max(greatest ?? rate, rate)
    }
}

/// The extremes of the four rates of one interface (or merge) in a session.
package struct LiveExtremes: Sendable, Hashable {
    package var rxBytes = RateExtremes(), txBytes = RateExtremes(), rxPackets = RateExtremes(), txPackets = RateExtremes()

    package init() {}

    mutating func add(_ row: LiveRow) {
        rxBytes.add(row.rate.rxBytes)
        txBytes.add(row.rate.txBytes)
        rxPackets.add(row.rate.rxPackets)
        txPackets.add(row.rate.txPackets)
    }
}

/// The arithmetic of `live`, apart from the kernel and the clock. Deltas follow rule 6 per ifindex
/// (a counter that went down counts from zero), so a recreated link never yields a huge rate.
package struct LiveSession: Sendable {
    package private(set) var totals: [String: LinkCounters] = [:]
    package private(set) var classes: [String: String] = [:]
    package private(set) var seconds: Double = 0
    /// Keyed by the label shown (a merge's `a+b`): the extremes of what was drawn.
    package private(set) var extremes: [String: LiveExtremes] = [:]

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
            let old = previous[link.ifindex]
            if let old {
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
                session: totals[link.name] ?? .zero, measured: old != nil && elapsed > 0))
        }
        let merged = selection.apply(rows, name: \.name, relabel: { row, label in
            var row = row
            row.name = label
            return row
        }, key: \.name, combine: { a, b in
            var merged = a
            merged.interfaceClass = InterfaceSelection.mergedClass(a.interfaceClass, b.interfaceClass)
            merged.rate = (a.rate.rxBytes + b.rate.rxBytes, a.rate.txBytes + b.rate.txBytes, a.rate.rxPackets + b.rate.rxPackets, a.rate.txPackets + b.rate.txPackets)
            merged.session += b.session
            merged.measured = a.measured || b.measured
            return merged
        }).sorted { NaturalOrder.less($0.name, $1.name) }
        for row in merged where row.measured { extremes[row.name, default: LiveExtremes()].add(row) }
        return merged
    }

    /// One line per interface, in columns that stay put from one refresh to the next (`nameWidth`).
    package static func line(_ row: LiveRow, nameWidth: Int, units: Units) -> String {
        func padded(_ text: String, _ width: Int) -> String { String(repeating: " ", count: max(0, width - text.count)) + text }
        let name = row.name + String(repeating: " ", count: max(0, nameWidth - row.name.count))
        return "\(name)  rx \(padded(units.rate(bytesPerSecond: row.rate.rxBytes), 14)) \(padded(packets(row.rate.rxPackets), 12))"
            + "  tx \(padded(units.rate(bytesPerSecond: row.rate.txBytes), 14)) \(padded(packets(row.rate.txPackets), 12))"
    }

    /// The line above the rates, printed once.
    package static func title(interval: Double, count: Int?) -> String {
        let until = count.map { "\($0) time\($0 == 1 ? "" : "s")" } ?? "Ctrl-C to stop"
        return "ifmeter live, every \(Units.fixed(interval, decimals: 1)) s, \(until)\n"
    }

    package static let nothingUp = "No watched interface up; 'ifmeter interfaces --all' lists them all."

    /// What `live` prints when it stops, as vnStat -l does: per interface the bytes and packets, and the
    /// max, average (the session's total over its seconds) and min of each rate; the caveat once, last.
    package func summary(selection: InterfaceSelection, units: Units) -> String {
        let rows = selection.apply(totals.map { (name: $0.key, counters: $0.value) }, name: \.name, relabel: { ($1, $0.counters) },
                                   key: \.name, combine: { ($0.name, $0.counters + $1.counters) })
            .sorted { NaturalOrder.less($0.name, $1.name) }
        var output = "ifmeter live for \(Units.fixed(self.seconds, decimals: 1)) s\n"
        for row in rows {
            let spans = extremes[row.name] ?? LiveExtremes()
            func rate(_ value: Double?) -> String { value.map { units.rate(bytesPerSecond: $0) } ?? "-" }
            func perSecond(_ value: Double?) -> String { value.map { Self.packets($0) } ?? "-" }
            let c = row.counters
            var table = TextTable([(row.name, .left), ("rx", .right), ("", .right), ("tx", .right), ("", .right)])
            table.append(["  total", units.bytes(c.rxBytes), "\(c.rxPackets) pkt", units.bytes(c.txBytes), "\(c.txPackets) pkt"])
            table.append(["  max", rate(spans.rxBytes.greatest), perSecond(spans.rxPackets.greatest), rate(spans.txBytes.greatest), perSecond(spans.txPackets.greatest)])
            table.append([
                "  average", rate(Self.averageRate(c.rxBytes, seconds: seconds)), perSecond(Self.averageRate(c.rxPackets, seconds: seconds)),
                rate(Self.averageRate(c.txBytes, seconds: seconds)), perSecond(Self.averageRate(c.txPackets, seconds: seconds)),
            ])
            table.append(["  min", rate(spans.rxBytes.least), perSecond(spans.rxPackets.least), rate(spans.txBytes.least), perSecond(spans.txPackets.least)])
            output += "\n" + table.rendered()
        }
        return output + (rows.isEmpty ? "Nothing was counted.\n" : "") + Estimate.basis + ".\n"
    }

    /// vnStat's average: what passed over the whole session's seconds, idle refreshes included.
    package static func averageRate(_ bytes: UInt64, seconds: Double) -> Double { Double(bytes) / max(seconds, 0.001) }

    static func packets(_ perSecond: Double) -> String {
        (perSecond < 10 ? Units.fixed(perSecond, decimals: 1) : String(Int64(saturating: perSecond.rounded()))) + " p/s"
    }
}

/// How `live` draws: on a terminal each refresh over the last in place (erase line by line, then
/// what is left below), in a pipe line after line as vnStat -l does.
package enum LiveDrawing {
    package enum Piece: Sendable, Hashable {
        case control(Output.TerminalControl)
        case text(String)
    }

    /// The pieces that replace the `drawn` lines above the cursor with `lines` (each then ends the line).
    package static func redraw(_ lines: [String], replacing drawn: Int) -> [Piece] {
        var pieces: [Piece] = [.control(.carriageReturn)]
        if drawn > 0 { pieces.append(.control(.cursorUp(drawn))) }
        for line in lines { pieces += [.control(.eraseLine), .text(line + "\n")] }
        return pieces + [.control(.eraseBelow)]
    }
}
