import Glibc

/// The standard streams through their descriptors, without Foundation or C's `stderr`. Everything
/// written here goes through `terminalSafe()`, so a name carrying ESC, CR or an OSC sequence shows as
/// text; ifmeter's own control sequences go through `terminalControl`.
package enum Output {
    package static func standardOutput(_ text: String) { write(text, to: 1) }
    package static func standardError(_ text: String) { write(text, to: 2) }

    /// A failed write (a full disk, a closed pipe) is thrown, so a command can exit 74 rather than 0.
    package static func standardOutputReportingErrors(_ text: String) throws(SystemError) {
        do {
            try FileSystem.writeAll(1, Array(text.terminalSafe().utf8), path: "stdout")
        } catch let error as SystemError {
            throw error
        } catch {
            throw SystemError("write", path: "stdout", errno: EIO)
        }
    }

    /// Bytes as they are (a PNG), where `standardOutputReportingErrors` would make text safe.
    package static func standardOutputBytes(_ bytes: [UInt8]) throws(SystemError) {
        do {
            try FileSystem.writeAll(1, bytes, path: "stdout")
        } catch let error as SystemError {
            throw error
        } catch {
            throw SystemError("write", path: "stdout", errno: EIO)
        }
    }

    /// Control sequences of ifmeter's own, written unfiltered: what `live` redraws its lines in place with.
    package enum TerminalControl: Sendable, Hashable {
        case carriageReturn
        case cursorUp(Int)
        case eraseLine
        case eraseBelow

        package var sequence: String {
            switch self {
            case .carriageReturn: "\r"
            case .cursorUp(let lines): "\u{1B}[\(lines)A"
            case .eraseLine: "\u{1B}[2K"
            case .eraseBelow: "\u{1B}[J"
            }
        }
    }

    package static func terminalControl(_ control: TerminalControl) {
        try? FileSystem.writeAll(1, Array(control.sequence.utf8), path: "stdout")
    }

    static func write(_ text: String, to fd: Int32) {
        try? FileSystem.writeAll(fd, Array(text.terminalSafe().utf8), path: fd == 1 ? "stdout" : "stderr")
    }

    package static func fail(_ program: String, _ message: String, _ code: ExitCode) -> Never {
        standardError("\(program): \(message)\n")
        exit(code.rawValue)
    }
}

extension CommandLine {
    /// The arguments after the program name with their bytes, each text nil where not UTF-8
    /// (CommandLine.arguments would have repaired it to U+FFFD).
    package static var argumentBytes: [(bytes: [UInt8], text: String?)] {
        (1..<Int(argc)).map { index in
            let bytes = unsafeArgv[index].map { pointer in
                Array(UnsafeBufferPointer(start: pointer, count: strlen(pointer))).map { UInt8(bitPattern: $0) }
            } ?? []
            return (bytes, String(validating: bytes, as: UTF8.self))
        }
    }

    /// The process environment, read without Foundation.
    package static var environment: [(key: String, value: String)] {
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
