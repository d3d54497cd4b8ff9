/// Something that broke the continuity of an interface's counters, and what it leaves missing.
package struct ResetEvent: Sendable, Hashable {
    package enum Reason: String, Sendable, CaseIterable {
        /// Same name, new ifindex: recreated while the daemon was not watching.
        case recreated
        /// The boot id changed: counters restarted at boot.
        case reboot
        /// A life absent at the last save of this boot: counted from zero.
        case appearedWhileStopped = "appeared-while-stopped"
        /// First sight of an interface: what passed before is not counted.
        case historyUnknown = "history-unknown"
        /// A counter went down within one life (driver reset), not a wrap.
        case counterReset = "counter-reset"
        /// A delta faster than the configured maximum rate, discarded.
        case implausible
        /// RTM_DELLINK: the interface was deleted; its final counters counted.
        case removed
        /// The interface disappeared while the daemon was stopped.
        case removedWhileStopped = "removed-while-stopped"
        /// The event socket overran: gone at the re-dump, or appeared meanwhile and counted from then.
        case eventsLost = "events-lost"
        /// Its ifindex came back under another name after a stop: renamed or replaced, no telling which.
        case renamedOrReplaced = "renamed-or-replaced"
        /// The daemon now runs in another network namespace than at its last save.
        case namespaceChanged = "namespace-changed"
        /// Watch= or an override no longer selects the interface.
        case unwatched
        /// Moved in from another network namespace with traffic counted there.
        case movedIn = "moved-in"
    }

    package enum Loss: Sendable, Hashable {
        /// Nothing is missing.
        case none
        /// Some traffic may be missing, and how much cannot be known.
        case unknown
        /// A delta was left out as implausible; these are its bytes.
        case discarded(rxBytes: UInt64, txBytes: UInt64)
        /// The link was up, unwatched for at most these seconds (between a clean stop and the reboot).
        case unseen(seconds: UInt64)

        package var name: String {
            switch self {
            case .none: "none"
            case .unknown: "unknown"
            case .discarded: "discarded"
            case .unseen: "unseen"
            }
        }
    }

    package var reason: Reason
    package var name: String
    package var oldIfindex: Int32?
    package var newIfindex: Int32?
    package var loss: Loss
    /// One sentence for people: what happened and what it means for the totals.
    package var detail: String

    package init(_ reason: Reason, name: String, old: Int32?, new: Int32?, loss: Loss, detail: String) {
        self.reason = reason
        self.name = name
        self.oldIfindex = old
        self.newIfindex = new
        self.loss = loss
        self.detail = detail
    }

    /// The detail of a removal whose final counters were all counted.
    package static let countedRemovalDetail = "deleted; its final counters were counted"
}
