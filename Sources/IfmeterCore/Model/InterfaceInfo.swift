/// What an interface is, as recorded beside its totals.
package struct InterfaceInfo: Sendable, Hashable {
    package var interfaceClass: InterfaceClass
    package var signal: String
    package var kind: String

    package init(interfaceClass: InterfaceClass, signal: String, kind: String) {
        self.interfaceClass = interfaceClass
        self.signal = signal
        self.kind = kind
    }

    /// What the classifier decided for a link (an ignored link counts as other).
    package init(_ classification: Classification, of link: LinkSample) {
        self.init(interfaceClass: classification.interfaceClass ?? .other, signal: classification.signal.description, kind: link.kind)
    }
}
