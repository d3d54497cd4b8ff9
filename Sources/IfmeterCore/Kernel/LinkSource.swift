/// A place to read every link's counters from.
package protocol LinkSource: AnyObject {
    /// How wide this source's counters are, which decides the wrap rule.
    var counterWidth: CounterWidth { get }
    /// Every link of the caller's network namespace, now.
    func links() throws -> [LinkSample]
}

/// A failure reported by libnl or getifaddrs, with what was being done.
package struct KernelError: Error, Sendable, CustomStringConvertible {
    package let operation: String
    package let message: String

    package var description: String { "\(operation): \(message)" }
}
