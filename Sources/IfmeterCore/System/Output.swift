import Glibc

/// Writing to the standard streams through the file descriptors, so output
/// needs neither Foundation nor C globals like `stderr`.
public enum Output {
    public static func standardOutput(_ text: String) { write(text, to: 1) }
    public static func standardError(_ text: String) { write(text, to: 2) }

    /// Standard output for a command's result: a failed write (a full disk,
    /// a closed pipe) is thrown, so the command can exit 74 rather than 0.
    public static func standardOutputReportingErrors(_ text: String) throws(SystemError) {
        do {
            try FileSystem.writeAll(1, Array(text.utf8), path: "stdout")
        } catch let error as SystemError {
            throw error
        } catch {
            throw SystemError("write", path: "stdout", errno: EIO)
        }
    }

    static func write(_ text: String, to fd: Int32) {
        try? FileSystem.writeAll(fd, Array(text.utf8), path: fd == 1 ? "stdout" : "stderr")
    }

    /// Prints "program: message" to stderr and exits with the sysexits code.
    public static func fail(_ program: String, _ message: String, _ code: ExitCode) -> Never {
        standardError("\(program): \(message)\n")
        exit(code.rawValue)
    }
}

extension CommandLine {
    /// The process environment, read without Foundation.
    public static var environment: [(key: String, value: String)] {
        var result: [(key: String, value: String)] = []
        var entry = Glibc.environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                result.append((String(text[..<equals]), String(text[text.index(after: equals)...])))
            }
            entry += 1
        }
        return result
    }
}
