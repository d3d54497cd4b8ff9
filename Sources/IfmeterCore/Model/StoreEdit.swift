/// A change to the store a person asks for, as vnStat's --remove, --rename, --add and --delete do:
/// run by `ifmeter` on a stopped daemon's store, or by the daemon itself when it runs (`EditRequest`).
package enum StoreEdit: Sendable, Equatable {
    case forget(String)
    case rename(String, to: String)
    case merge(String, into: String)
    case watch(String)
    case unwatch(String)

    /// The names it takes, as shown and typed (encoded).
    package var names: [String] {
        switch self {
        case .forget(let name), .watch(let name), .unwatch(let name): [name]
        case .rename(let old, let new): [old, new]
        case .merge(let source, let target): [source, target]
        }
    }

    package var verb: String {
        switch self {
        case .forget: "forget"
        case .rename: "rename"
        case .merge: "merge"
        case .watch: "watch"
        case .unwatch: "unwatch"
        }
    }

    package init?(verb: String, names: [String]) {
        switch (verb, names.count) {
        case ("forget", 1): self = .forget(names[0])
        case ("watch", 1): self = .watch(names[0])
        case ("unwatch", 1): self = .unwatch(names[0])
        case ("rename", 2): self = .rename(names[0], to: names[1])
        case ("merge", 2): self = .merge(names[0], into: names[1])
        default: return nil
        }
    }
}
