/// Selections over what the reports show.
extension InterfaceSelection {
    package func apply(_ rows: [HistoryRow]) -> [HistoryRow] {
        apply(rows, name: \.name, relabel: { row, label in
            var row = row
            row.name = label
            return row
        }, key: { HistoryKey(name: $0.name, start: $0.start) }, combine: { a, b in
            var merged = a
            merged.counters += b.counters
            // Members were projected alone (HistoryReport.rows); one without an estimate adds what it counted.
            if a.estimated != nil || b.estimated != nil {
                merged.estimated = (a.estimated ?? a.counters) + (b.estimated ?? b.counters)
            }
            merged.live = a.live || b.live
            merged.incomplete = a.incomplete ?? b.incomplete
            merged.imported = a.imported || b.imported
            merged.interfaceClass = Self.mergedClass(a.interfaceClass, b.interfaceClass)
            return merged
        })
    }

    package func apply(_ buckets: [StoredBucket]) -> [StoredBucket] {
        apply(buckets, name: \.name, relabel: { bucket, label in
            var bucket = bucket
            bucket.name = label
            return bucket
        }, key: { HistoryKey(name: $0.name, start: $0.start) }, combine: { a, b in
            var merged = a
            merged.counters += b.counters
            merged.incomplete = a.incomplete ?? b.incomplete
            merged.imported = a.imported || b.imported
            merged.interfaceClass = Self.mergedClass(a.interfaceClass, b.interfaceClass)
            return merged
        })
    }

    package func apply(_ interfaces: [InterfaceSnapshot]) -> [InterfaceSnapshot] {
        apply(interfaces, name: \.name, relabel: { interface, label in
            var interface = interface
            if label != interface.name {
                interface.name = label
                interface.signal = "merged"
            }
            return interface
        }, key: \.name, combine: { a, b in
            var merged = a
            merged.interfaceClass = Self.mergedClass(a.interfaceClass, b.interfaceClass)
            // The liveliest of the two: a merge is retired only if both are.
            merged.presence = LinkPresence.liveliestFirst.first { $0 == a.presence || $0 == b.presence } ?? a.presence
            merged.liveDelta += b.liveDelta
            merged.today += b.today
            merged.yesterday += b.yesterday
            merged.lastMonth += b.lastMonth
            merged.cycle += b.cycle
            merged.sinceBoot += b.sinceBoot
            merged.allTime += b.allTime
            if let rate = b.rate {
                merged.rate = (rx: (a.rate?.rx ?? 0) + rate.rx, tx: (a.rate?.tx ?? 0) + rate.tx)
                merged.rateWindow = a.rateWindow ?? b.rateWindow
            }
            if let event = b.lastEvent, event.time > a.lastEvent?.time ?? .min { merged.lastEvent = event }
            merged.incomplete = a.incomplete ?? b.incomplete
            merged.firstSeen = min(a.firstSeen, b.firstSeen)
            return merged
        })
    }
}

private struct HistoryKey: Hashable {
    var name: String
    var start: Int64
}
