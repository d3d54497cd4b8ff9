// The one Swift file that wraps libc file I/O. Everything above it sees
// Strings and byte arrays; unsafe buffers stay here.
import Glibc

/// A failed system call, with errno and what was being done.
public struct SystemError: Error, Sendable, CustomStringConvertible {
    public let operation: String
    public let path: String
    public let errno: Int32

    public init(_ operation: String, path: String, errno: Int32) {
        self.operation = operation
        self.path = path
        self.errno = errno
    }

    public var description: String {
        "\(path): \(operation): \(String(cString: strerror(errno)))"
    }
}

/// Minimal file access on libc, kept out of Foundation so the daemon stays small.
public enum FileSystem {
    /// Retries a system call interrupted by a signal (EINTR).
    @inline(__always)
    static func retrying<T: BinaryInteger>(_ call: () -> T) -> T {
        while true {
            let result = call()
            if result >= 0 || Glibc.errno != EINTR { return result }
        }
    }

    /// The whole file, or nil when it does not exist.
    public static func readBytes(_ path: String) throws -> [UInt8]? {
        let fd = retrying { open(path, O_RDONLY | O_CLOEXEC) }
        if fd < 0 {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw SystemError("open", path: path, errno: errno)
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { buffer in
                retrying { read(fd, buffer.baseAddress, buffer.count) }
            }
            if count < 0 { throw SystemError("read", path: path, errno: errno) }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }

    /// The file as UTF-8 text, or nil when it does not exist.
    public static func readText(_ path: String) throws -> String? {
        try readBytes(path).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Whether anything (file, directory, symlink target) exists at path.
    public static func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    /// Why `access(2)` refuses path for `mode` (R_OK, F_OK...), or nil when it allows it.
    public static func accessError(_ path: String, mode: Int32 = F_OK) -> Int32? {
        access(path, mode) == 0 ? nil : errno
    }

    /// Whether path is a directory (following symlinks).
    public static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// Creates the directory and its parents, like `mkdir -p`.
    public static func createDirectory(_ path: String, mode: mode_t = 0o755) throws {
        if isDirectory(path) { return }
        let parent = directoryName(path)
        if parent != path && !parent.isEmpty { try createDirectory(parent, mode: mode) }
        if mkdir(path, mode) != 0 && errno != EEXIST {
            throw SystemError("mkdir", path: path, errno: errno)
        }
        if !isDirectory(path) { throw SystemError("mkdir", path: path, errno: ENOTDIR) }
    }

    /// Writes bytes to a new file or replaces its contents.
    public static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644) throws {
        let fd = retrying { open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode) }
        if fd < 0 { throw SystemError("open", path: path, errno: errno) }
        defer { close(fd) }
        try writeAll(fd, bytes, path: path)
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                retrying { Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset) }
            }
            if written < 0 { throw SystemError("write", path: path, errno: errno) }
            offset += written
        }
    }

    /// The part of path before its last slash ("." when none).
    public static func directoryName(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }

    /// Takes an exclusive advisory lock on path (created if missing) and
    /// keeps it for the life of the process; returns false when another
    /// process holds it.
    public static func lockExclusively(_ path: String) throws -> Bool {
        let fd = retrying { open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644) }
        if fd < 0 { throw SystemError("open", path: path, errno: errno) }
        if flock(fd, LOCK_EX | LOCK_NB) == 0 { return true }
        let saved = errno
        close(fd)
        if saved == EWOULDBLOCK { return false }
        throw SystemError("flock", path: path, errno: saved)
    }

    /// The working directory, or nil when it cannot be named (removed).
    public static func currentDirectory() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return nil }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The path of the running executable.
    public static func executablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

extension FileSystem {
    /// Whether another process holds an exclusive lock on path (the daemon
    /// on its lock file). Readers only test it; they never take it.
    public static func isLockedByAnotherProcess(_ path: String) -> Bool {
        let fd = retrying { open(path, O_RDONLY | O_CLOEXEC) }
        if fd < 0 { return false }
        defer { close(fd) }
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return false
        }
        return errno == EWOULDBLOCK
    }

    /// Whether fd is a terminal.
    public static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }

    /// Waits until fd is readable or `seconds` pass; true when readable.
    public static func waitReadable(_ fd: Int32, seconds: Double) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let result = poll(&entry, 1, Int32(seconds * 1000))
        return result > 0 && entry.revents & Int16(POLLIN) != 0
    }

    /// Sleeps, resuming after signals that do not end the process.
    public static func sleep(seconds: Double) {
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }
}

extension FileSystem {
    /// Replaces path's contents atomically for readers that poll it (like
    /// node_exporter's textfile collector): a temporary file beside it whose
    /// name does not end like the target's, created exclusively and without
    /// following symlinks, given `mode` whatever the umask, fsynced, renamed
    /// over path (replacing a symlink there rather than writing through it),
    /// then the directory fsynced so the rename survives a power cut.
    public static func writeAtomically(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644) throws {
        let directory = directoryName(path)
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let temporary = "\(directory)/.\(name).\(getpid()).tmp"
        var fd = retrying { open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode) }
        if fd < 0 && errno == EEXIST {
            // Left by a crash: remove the entry itself (never its target).
            unlink(temporary)
            fd = retrying { open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode) }
        }
        if fd < 0 { throw SystemError("create temporary file", path: temporary, errno: errno) }
        do {
            if fchmod(fd, mode) != 0 { throw SystemError("fchmod", path: temporary, errno: errno) }
            try writeAll(fd, bytes, path: temporary)
            if fsync(fd) != 0 { throw SystemError("fsync", path: temporary, errno: errno) }
            close(fd)
            fd = -1
            if rename(temporary, path) != 0 { throw SystemError("rename into place", path: path, errno: errno) }
        } catch {
            if fd >= 0 { close(fd) }
            unlink(temporary)
            throw error
        }
        let directoryFD = retrying { open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        if directoryFD >= 0 {
            fsync(directoryFD)
            close(directoryFD)
        }
    }
}
