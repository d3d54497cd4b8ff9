/// `ifmeter events`: the reset log.
package enum EventsReport {
    package static let schema = "ifmeter.events/1"

    /// A line per event within 80 columns, its detail wrapped beneath; the caveat once at the bottom.
    package static func text(_ events: [StoredEvent]) -> String {
        var table = TextTable([("TIME", .left), ("INTERFACE", .left), ("REASON", .left), ("LOSS", .left)])
        var details: [[String]] = []
        for event in events {
            table.append([TimeText.moment(event.time), event.name, event.reason.rawValue, event.loss.name])
            let index = ifindexChange(old: event.oldIfindex, new: event.newIfindex)
            details.append(Wrapping.lines(event.detail + (index.map { " (\($0))" } ?? ""), width: 80, indent: "  "))
        }
        let lines = table.rendered().split(separator: "\n").map(String.init)
        var output = lines[0] + "\n"
        for (line, detail) in zip(lines.dropFirst(), details) { output += ([line] + detail).joined(separator: "\n") + "\n" }
        return output + (events.isEmpty ? "No reset recorded.\n" : "") + Estimate.basis + ".\n"
    }

    /// The link's ifindex before and after, as a person reads it: `ifindex 5 -> 7`, `was ifindex 5`.
    static func ifindexChange(old: Int32?, new: Int32?) -> String? {
        switch (old, new) {
        case (nil, nil): nil
        case (let old?, nil): "was ifindex \(old)"
        case (nil, let new?): "ifindex \(new)"
        case (let old?, let new?): old == new ? "ifindex \(new)" : "ifindex \(old) -> \(new)"
        }
    }

    package static func json(_ events: [StoredEvent]) -> JSON {
        .object([
            ("schema", .string(schema)), ("estimate", .bool(true)), ("basis", .string(Estimate.basis)),
            ("events", .array(events.map(eventJSON))),
        ])
    }

    static func eventJSON(_ event: StoredEvent) -> JSON {
        .object([
            // A pending event has no time yet: the daemon's next start gives it one.
            ("time", event.pending ? .null : .string(TimeText.utc(event.time))), ("interface", .string(event.name)),
            ("old_ifindex", event.oldIfindex.map { .int(Int64($0)) } ?? .null),
            ("new_ifindex", event.newIfindex.map { .int(Int64($0)) } ?? .null),
            ("reason", .string(event.reason.rawValue)), ("loss", .string(event.loss.name)), ("detail", .string(event.detail)),
        ] + (event.pending ? [("pending", .bool(true))] : []) + Self.unseenField(event.loss))
    }

    private static func unseenField(_ loss: ResetEvent.Loss) -> [(String, JSON)] {
        guard case .unseen(let seconds) = loss else { return [] }
        return [("unseen_seconds", .int(Int64(clamping: seconds)))]
    }
}

extension ResetEvent.Loss {
    /// What a person reads: most events (a tunnel torn down) lose nothing, and say so.
    package var phrase: String {
        switch self {
        case .none: "nothing lost"
        case .unknown: "loss unknown"
        case .discarded: "traffic discarded"
        case .unseen(let seconds): "not seen for at most \(counted(Int(clamping: seconds), "second"))"
        }
    }
}
