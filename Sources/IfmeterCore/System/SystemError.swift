// FileSystem's errno boundary: every call whose errno is read goes through `valueOrErrno`.
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

/// What `call` returned, a C function that returns -1 and sets errno when it fails, or its errno
/// with `operation` and `path`; called again while it fails with EINTR. Never for `close`: Linux
/// frees the descriptor even on EINTR, so a retry could close one another thread has opened.
@inline(__always)
func valueOrErrno<T: BinaryInteger>(_ operation: @autoclosure () -> String, path: String, _ call: () -> T) -> Result<T, SystemError> {
    while true {
        let result = call()
        if result >= 0 { return .success(result) }
        let code = errno
        if code != EINTR { return .failure(SystemError(operation(), path: path, errno: code)) }
    }
}
