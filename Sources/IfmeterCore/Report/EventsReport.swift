/// `ifmeter events`: the reset log.
package enum EventsReport {
    package static let schema = "ifmeter.events/1"

    package static func text(_ events: [StoredEvent]) -> String {
        var table = TextTable([("TIME", .left), ("INTERFACE", .left), ("IFINDEX", .left), ("REASON", .left), ("LOSS", .left), ("DETAIL", .left)])
        for event in events {
            let indexes = [event.oldIfindex, event.newIfindex].map { $0.map(String.init) ?? "-" }.joined(separator: " -> ")
            table.append([TimeText.moment(event.time), event.name, indexes, event.reason.rawValue, event.loss.name, event.detail])
        }
        return table.rendered() + (events.isEmpty ? "No reset recorded.\n" : "")
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
        ] + (event.pending ? [("pending", .bool(true))] : []))
    }
}

extension ResetEvent.Loss {
    /// What a person reads: most events (a tunnel torn down) lose nothing, and say so.
    package var phrase: String {
        switch self {
        case .none: "nothing lost"
        case .unknown: "loss unknown"
        case .discarded: "traffic discarded"
        }
    }
}
