/// One interface's history as a vnStat 2.x database holds it, dates already turned into bucket starts.
package struct VnStatInterface: Sendable, Hashable {
    package var name: String
    /// vnStat's all-time totals (`interface.rxtotal`, `txtotal`).
    package var rxTotal: UInt64
    package var txTotal: UInt64
    /// Rows by granularity; `top` apart.
    package var rows: [Granularity: [ImportedRow]]
    package var top: [ImportedRow]

    package init(name: String, rxTotal: UInt64, txTotal: UInt64, rows: [Granularity: [ImportedRow]], top: [ImportedRow] = []) {
        self.name = name
        self.rxTotal = rxTotal
        self.txTotal = txTotal
        self.rows = rows
        self.top = top
    }
}

/// What an import takes of one interface: the rows, the all-time totals, and what it could not take.
package struct ImportPlan: Sendable, Hashable {
    package var rows: [ImportedRow]
    package var totals: LinkCounters
    /// Granularities whose row the seam cuts and no finer rows reach back to split: that row is left out.
    package var gaps: [Granularity] = []
}

/// The seam rule, pure: vnStat's rows count only for what ended before ifmeter's own first sight of
/// the name, so nothing is counted twice. A row the seam cuts is rebuilt from the finer rows before it.
package enum VnStatSeam {
    /// The finest first: a cut row of each granularity is summed from the next finer one kept.
    static let finestFirst: [Granularity] = [.fiveMinutes, .hour, .day, .month, .year]

    /// `end(g, start)`: where the bucket starting at `start` ends (the next one's start).
    package static func plan(
        _ history: VnStatInterface, seam: Int64?, skipping skipped: Set<Granularity> = [],
        end: (Granularity, Int64) -> Int64 = { TimeBuckets.start(of: $0, -1, before: $1) }
    ) -> ImportPlan {
        let kept = finestFirst.filter { !skipped.contains($0) }
        guard let seam else {
            let rows = kept.flatMap { history.rows[$0] ?? [] } + history.top
            return ImportPlan(rows: rows, totals: LinkCounters(rxBytes: history.rxTotal, txBytes: history.txTotal))
        }
        var plan = ImportPlan(rows: [], totals: .zero)
        var finer: [ImportedRow] = []   // the rows taken of the previous (finer) granularity
        var finerEarliest: Int64?       // how far back vnStat still holds that granularity
        for granularity in kept {
            let rows = history.rows[granularity] ?? []
            var taken: [ImportedRow] = []
            for row in rows {
                let rowEnd = end(granularity, row.start)
                if rowEnd <= seam {
                    taken.append(row)
                } else if row.start < seam {
                    // Cut by the seam: only from finer rows reaching back to its start.
                    guard let earliest = finerEarliest, earliest <= row.start else {
                        plan.gaps.append(granularity)
                        continue
                    }
                    let within = finer.filter { $0.start >= row.start && $0.start < seam }
                    let rx = within.reduce(UInt64(0)) { $0 &+ $1.rxBytes }, tx = within.reduce(UInt64(0)) { $0 &+ $1.txBytes }
                    if rx > 0 || tx > 0 { taken.append(ImportedRow(granularity, start: row.start, rxBytes: rx, txBytes: tx)) }
                }
            }
            plan.rows += taken
            if !rows.isEmpty {
                finer = taken
                finerEarliest = rows.map(\.start).min()
            }
        }
        // All time: the coarsest rows before the seam, plus what vnStat's totals hold beyond its rows
        // (history older than its year rows, as an upgrade from vnStat 1.x leaves).
        let coarsest = kept.last { !(history.rows[$0] ?? []).isEmpty }
        let before = plan.rows.filter { $0.granularity == coarsest }
        let all = coarsest.map { history.rows[$0] ?? [] } ?? []
        func sum(_ rows: [ImportedRow], _ field: KeyPath<ImportedRow, UInt64>) -> UInt64 { rows.reduce(0) { $0 &+ $1[keyPath: field] } }
        let rxBeyond = history.rxTotal > sum(all, \.rxBytes) ? history.rxTotal - sum(all, \.rxBytes) : 0
        let txBeyond = history.txTotal > sum(all, \.txBytes) ? history.txTotal - sum(all, \.txBytes) : 0
        plan.totals = LinkCounters(rxBytes: sum(before, \.rxBytes) + rxBeyond, txBytes: sum(before, \.txBytes) + txBeyond)
        plan.rows += history.top.filter { end(.day, $0.start) <= seam }
        return plan
    }
}
