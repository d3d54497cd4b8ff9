import CKernel
import Glibc

/// A program run to completion with its input given and its output kept: no shell, no PATH search
/// (the caller names the executable), this process's environment.
package enum ChildProcess {
    package struct Finished: Sendable {
        /// The exit status, or nil when a signal ended it.
        package var exitStatus: Int32?
        package var signal: Int32?
        package var output: [UInt8]
        package var errors: [UInt8]
    }

    /// Runs `path` with `arguments` (argv[0] first, each free of NUL), `input` on its standard input;
    /// its standard output and errors are gathered in memory files, read back when it ends.
    package static func run(_ path: String, arguments: [String], input: [UInt8]) throws(SystemError) -> Finished {
        let files = try (anonymousFile("input", path: path), anonymousFile("output", path: path), anonymousFile("errors", path: path))
        defer { close(files.0); close(files.1); close(files.2) }
        do {
            try FileSystem.writeAll(files.0, input, path: path)
        } catch let error as SystemError {
            throw error
        } catch {
            throw SystemError("write", path: path, errno: EIO)
        }
        guard lseek(files.0, 0, SEEK_SET) == 0 else { throw SystemError("lseek", path: path, errno: errno) }
        var packed: [CChar] = []
        for argument in arguments { packed += argument.utf8CString }
        var status: Int32 = 0
        let failure = ifm_spawn_and_wait(path, packed, Int32(arguments.count), files.0, files.1, files.2, &status)
        guard failure == 0 else { throw SystemError("run", path: path, errno: failure) }
        // waitpid's status word, decoded as <sys/wait.h>'s macros do.
        let signal = status & 0x7f
        return Finished(
            exitStatus: signal == 0 ? (status >> 8) & 0xff : nil, signal: signal == 0 ? nil : signal,
            output: try readAll(files.1, path: path), errors: try readAll(files.2, path: path))
    }

    private static func anonymousFile(_ name: String, path: String) throws(SystemError) -> Int32 {
        let fd = ifm_anonymous_file(name)
        guard fd >= 0 else { throw SystemError("memfd_create", path: path, errno: errno) }
        return fd
    }

    private static func readAll(_ fd: Int32, path: String) throws(SystemError) -> [UInt8] {
        let size = lseek(fd, 0, SEEK_END)
        guard size >= 0, lseek(fd, 0, SEEK_SET) == 0 else { throw SystemError("lseek", path: path, errno: errno) }
        var bytes = [UInt8](repeating: 0, count: Int(size))
        var done = 0
        while done < bytes.count {
            let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + done, $0.count - done) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw SystemError("read", path: path, errno: count < 0 ? errno : EIO) }
            done += count
        }
        return bytes
    }
}
