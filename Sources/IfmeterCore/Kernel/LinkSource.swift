/// A place to read every link's counters from.
package protocol LinkSource: AnyObject {
    /// Every link of the caller's network namespace, now.
    func links() throws -> [LinkSample]
    /// Link events as the daemon read them, in arrival order, and whether some were lost: a source that
    /// keeps what events announce (names, kinds, flags) between dumps stays current with them.
    func note(events: [LinkEvent], overrun: Bool)
}

extension LinkSource {
    package func note(events: [LinkEvent], overrun: Bool) {}
}

/// A failure reported by libnl or getifaddrs, with what was being done and
/// the library's own code (libnl's `NLE_*`, or an errno for getifaddrs).
package struct KernelError: Error, Sendable, CustomStringConvertible {
    package let operation: String
    package let code: Int32
    package let message: String

    package init(operation: String, code: Int32, message: String) {
        self.operation = operation
        self.code = code
        self.message = message
    }

    package var description: String { "\(operation): \(message)" }
}
