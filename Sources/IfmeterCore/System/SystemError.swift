// FileSystem's error, SystemError, and its retry of a call a signal interrupted.
import Glibc

/// A failed system call, with errno and what was being done.
package struct SystemError: Error, Sendable, CustomStringConvertible {
    package let operation: String
    package let path: String
    package let errno: Int32

    /// Said instead of the errno's text, where it would mislead.
    private let explanation: String?

    package init(_ operation: String, path: String, errno: Int32, explanation: String? = nil) {
        self.operation = operation
        self.path = path
        self.errno = errno
        self.explanation = explanation
    }

    package var description: String { "\(path): \(reason)" }

    /// What failed, without the path (for a message that names it already).
    package var reason: String { "\(operation): \(explanation ?? String(cString: strerror(errno)))" }
}

extension FileSystem {
    /// Retries a system call interrupted by a signal (EINTR).
    @inline(__always)
    static func retrying<T: BinaryInteger>(_ call: () -> T) -> T {
        while true {
            let result = call()
            if result >= 0 || Glibc.errno != EINTR { return result }
        }
    }
}
