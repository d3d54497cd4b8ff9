// The one Swift file that wraps libc file I/O. Everything above it sees
// Strings and byte arrays; unsafe buffers stay here.
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

/// Minimal file access on libc, kept out of Foundation so the daemon stays small.
package enum FileSystem {
    /// Retries a system call interrupted by a signal (EINTR).
    @inline(__always)
    static func retrying<T: BinaryInteger>(_ call: () -> T) -> T {
        while true {
            let result = call()
            if result >= 0 || Glibc.errno != EINTR { return result }
        }
    }

    /// The whole file, or nil when it does not exist. Opened without
    /// blocking (a FIFO's open would wait for a writer): a pipe is read as
    /// its writer writes, a FIFO nobody writes to is refused after
    /// `pipeWait`, and a file longer than `limit` is refused.
    package static func readBytes(_ path: String, atMost limit: Int = readLimit) throws -> [UInt8]? {
        let fd = retrying { open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) }
        if fd < 0 {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw SystemError("open", path: path, errno: errno)
        }
        defer { close(fd) }
        var info = stat()
        let isPipe = fstat(fd, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            // A pipe (`--config <(...)`, /dev/stdin) is read as its writer
            // writes. A FIFO no process opened for writing would read as an
            // empty file at once: it is refused after a wait instead.
            if isPipe && !waitForDataOrEnd(fd, seconds: pipeWait) { throw NotARegularFile.noWriter(path: path, seconds: pipeWait) }
            let count = chunk.withUnsafeMutableBytes { buffer in
                retrying { read(fd, buffer.baseAddress, buffer.count) }
            }
            if count < 0 && isPipe && errno == EAGAIN { continue }
            if count < 0 { throw SystemError("read", path: path, errno: errno) }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
            // A character device may never end (/dev/zero as a path).
            if bytes.count > limit {
                let regular = info.st_mode & S_IFMT == S_IFREG
                throw NotARegularFile.tooLarge(path: path, size: regular ? Int(info.st_size) : nil, limit: limit)
            }
        }
    }

    /// What `readBytes` reads at most: every file it is given (the
    /// configuration, the boot id, a sysfs attribute) is far smaller.
    package static let readLimit = 1 << 20

    /// How long `readBytes` waits for a pipe's writer to write or close.
    static let pipeWait = 5.0

    /// Whether a pipe has data, or its writer closed, within `seconds`.
    /// A FIFO that never had a writer shows neither (no POLLHUP on Linux).
    private static func waitForDataOrEnd(_ fd: Int32, seconds: Double) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return retrying { poll(&entry, 1, Int32(seconds * 1000)) } > 0 && entry.revents != 0
    }

    /// The file as UTF-8 text, or nil when it does not exist.
    package static func readText(_ path: String, atMost limit: Int = readLimit) throws -> String? {
        try readBytes(path, atMost: limit).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The target a symbolic link names (readlink(2)), or nil when path is
    /// not a symbolic link or cannot be read.
    package static func symbolicLinkTarget(_ path: String) -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBufferPointer { $0.withMemoryRebound(to: CChar.self) { readlink(path, $0.baseAddress!, $0.count) } }
        guard count > 0, count < buffer.count else { return nil }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }

    /// Whether anything (file, directory, symlink target) exists at path.
    package static func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    /// Whether path itself is a symbolic link (dangling or not).
    package static func isSymbolicLink(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK
    }

    /// Whether path is a file holding at least one byte (following symlinks).
    package static func hasData(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_size > 0
    }

    /// What can stand at a path that is neither a regular file nor a
    /// symbolic link.
    package enum NonFile: String, CustomStringConvertible {
        case directory = "a directory"
        case device = "a device"
        case fifo = "a FIFO"
        case socket = "a socket"
        package var description: String { rawValue }
    }

    /// What stands at path when it is neither a regular file nor a
    /// symbolic link; nil when it is one of those, or nothing is there.
    /// `followingSymbolicLinks`: what a link there leads to instead (nil
    /// for a dangling one). Never opens the path: a FIFO is not waited on.
    package static func nonFileKind(_ path: String, followingSymbolicLinks: Bool = false) -> NonFile? {
        var info = stat()
        guard (followingSymbolicLinks ? stat(path, &info) : lstat(path, &info)) == 0 else { return nil }
        return nonFileKind(mode: info.st_mode)
    }

    /// What a file of stat's `mode` is, when neither a regular file nor a
    /// symbolic link.
    private static func nonFileKind(mode: mode_t) -> NonFile? {
        switch mode & S_IFMT {
        case S_IFREG, S_IFLNK: return nil
        case S_IFDIR: return .directory
        case S_IFIFO: return .fifo
        case S_IFSOCK: return .socket
        default: return .device
        }
    }

    /// The absolute path with every symbolic link, `.` and `..` resolved
    /// (realpath(3)); nil when some part of it does not exist.
    package static func resolvedPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The kernel's tree (/dev, /proc, /sys) that `directory` is in once
    /// resolved, if any: no output of ifmeter's belongs there (a journal
    /// had written its header into a link's alias, /sys/class/net/LINK/
    /// ifalias). /dev/shm is a tmpfs for anyone's files.
    package static func kernelTree(holding directory: String) -> String? {
        kernelTree(ofResolved: resolvedPath(directory) ?? directory)
    }

    /// The same for the directory `descriptor` holds open, where the path
    /// it was opened by may since name another (a directory swapped for a
    /// symbolic link into /sys while the daemon runs).
    static func kernelTree(ofDirectoryDescriptor descriptor: Int32) -> String? {
        symbolicLinkTarget("/proc/self/fd/\(descriptor)").flatMap(kernelTree(ofResolved:))
    }

    private static func kernelTree(ofResolved directory: String) -> String? {
        func isIn(_ root: String) -> Bool { directory == root || directory.hasPrefix(root + "/") }
        if isIn("/dev/shm") { return nil }
        return ["/dev", "/proc", "/sys"].first(where: isIn)
    }

    /// Whether path is a directory (following symlinks).
    package static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// Creates the directory and its parents, like `mkdir -p`.
    package static func createDirectory(_ path: String, mode: mode_t = 0o755) throws {
        if isDirectory(path) { return }
        let parent = directoryName(path)
        if parent != path && !parent.isEmpty { try createDirectory(parent, mode: mode) }
        if mkdir(path, mode) != 0 && errno != EEXIST {
            throw SystemError("mkdir", path: path, errno: errno)
        }
        if !isDirectory(path) { throw SystemError("mkdir", path: path, errno: ENOTDIR) }
    }

    /// Writes bytes to a new file or replaces its contents.
    package static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644) throws {
        let fd = retrying { open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode) }
        if fd < 0 { throw SystemError("open", path: path, errno: errno) }
        defer { close(fd) }
        try writeAll(fd, bytes, path: path)
    }

    /// Writes all of `bytes` at the file position, or at `fileOffset`
    /// (pwrite: one syscall instead of a seek and a write).
    static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String, at fileOffset: Int? = nil) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                let start = buffer.baseAddress! + offset
                return retrying {
                    if let fileOffset { pwrite(fd, start, buffer.count - offset, off_t(fileOffset + offset)) }
                    else { Glibc.write(fd, start, buffer.count - offset) }
                }
            }
            if written < 0 { throw SystemError("write", path: path, errno: errno) }
            offset += written
        }
    }

    /// What `openRegularFile` refuses to read or write.
    package enum NotARegularFile: Error, CustomStringConvertible {
        case symbolicLink(path: String)
        case special(path: String)
        /// A FIFO that no process wrote to or closed within `seconds`.
        case noWriter(path: String, seconds: Double)
        /// `size` nil: a device read past `limit`, whose end is unknown.
        case tooLarge(path: String, size: Int?, limit: Int)

        package var description: String {
            switch self {
            case .symbolicLink(let path): "\(path): a symbolic link, not followed"
            case .special(let path): "\(path): not a regular file"
            case .noWriter(let path, let seconds): "\(path): a FIFO no process wrote to in \(Int(seconds)) s"
            case .tooLarge(let path, let size?, let limit): "\(path): \(size) bytes, more than the \(limit) it may hold"
            case .tooLarge(let path, nil, let limit): "\(path): more than the \(limit) bytes it may hold"
            }
        }
    }

    /// Opens a file that must be a regular one of at most `limit` bytes:
    /// a symlink planted at the name is not followed (O_NOFOLLOW), a FIFO
    /// or device is never waited on (O_NONBLOCK), and an oversized file is
    /// never read into memory. Nil when it does not exist (without O_CREAT).
    package static func openRegularFile(_ path: String, flags: Int32, mode: mode_t = 0o600, limit: Int) throws -> (descriptor: Int32, size: Int)? {
        let fd = retrying { open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode) }
        if fd < 0 {
            if errno == ENOENT { return nil }
            if errno == ELOOP { throw NotARegularFile.symbolicLink(path: path) }
            if errno == EISDIR || errno == ENXIO { throw NotARegularFile.special(path: path) }
            throw SystemError("open", path: path, errno: errno)
        }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw NotARegularFile.special(path: path)
        }
        guard Int(info.st_size) <= limit else {
            close(fd)
            throw NotARegularFile.tooLarge(path: path, size: Int(info.st_size), limit: limit)
        }
        return (fd, Int(info.st_size))
    }

    /// The first `size` bytes of an open file (fewer if it is shorter).
    package static func readPrefix(_ fd: Int32, size: Int, path: String) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: size)
        var offset = 0
        while offset < size {
            let count = bytes.withUnsafeMutableBytes { buffer in
                retrying { pread(fd, buffer.baseAddress! + offset, size - offset, off_t(offset)) }
            }
            if count < 0 { throw SystemError("read", path: path, errno: errno) }
            if count == 0 { break }
            offset += count
        }
        return Array(bytes[..<offset])
    }

    /// Takes an exclusive flock(2) without waiting; false when another
    /// process holds one.
    package static func tryLock(_ fd: Int32, path: String) throws -> Bool {
        if flock(fd, LOCK_EX | LOCK_NB) == 0 { return true }
        if errno == EWOULDBLOCK { return false }
        throw SystemError("flock", path: path, errno: errno)
    }

    /// Whether two paths name one file: the same text, or (both existing)
    /// the same device and inode, whatever symlinks or `..` lead there. A
    /// file not made yet (a stopped daemon's WAL index) is the same when
    /// its name is, in the same directory.
    package static func sameFile(_ a: String, _ b: String) -> Bool {
        if a == b { return true }
        var first = stat()
        var second = stat()
        guard stat(a, &first) == 0, stat(b, &second) == 0 else {
            let names = (a.split(separator: "/").last, b.split(separator: "/").last)
            guard let name = names.0, name == names.1, name != ".", name != ".." else { return false }
            return sameFile(directoryName(a), directoryName(b))
        }
        return first.st_dev == second.st_dev && first.st_ino == second.st_ino
    }

    /// The part of path before its last slash ("." when none).
    package static func directoryName(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }

    /// Takes an exclusive advisory lock on path (created if missing) and
    /// keeps it for the life of the process; returns false when another
    /// process holds it. Then records this process in the liveness file
    /// beside it (`livenessPath`), which readers check instead of the lock.
    ///
    /// flock needs only a read descriptor, so a lock file other users can
    /// open is a lock they can hold, keeping the daemon from starting. The
    /// file is therefore 0600, opened without following symlinks, and one
    /// that others could have opened (another owner, group or other bits,
    /// as older versions left it at 0644, or not a regular file) is
    /// replaced by a fresh one first: a descriptor held on the old file then
    /// locks nothing.
    package static func lockExclusively(_ path: String) throws -> Bool {
        var fd: Int32 = -1
        for _ in 0..<3 {
            fd = retrying { open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600) }
            if fd < 0 && errno != ELOOP { throw SystemError("open", path: path, errno: errno) }
            var info = stat()
            if fd >= 0 && fstat(fd, &info) == 0 && info.st_uid == geteuid() && info.st_mode & 0o077 == 0 && info.st_mode & S_IFMT == S_IFREG {
                break
            }
            if fd >= 0 { close(fd) }
            fd = -1
            if unlink(path) != 0 && errno != ENOENT { throw SystemError("replace a lock file others could open", path: path, errno: errno) }
        }
        if fd < 0 { throw SystemError("open", path: path, errno: EAGAIN) }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let saved = errno
            close(fd)
            if saved == EWOULDBLOCK { return false }
            throw SystemError("flock", path: path, errno: saved)
        }
        let start = processStartTime(getpid()) ?? 0
        try writeAtomically(Array("\(getpid()) \(start)\n".utf8), to: livenessPath(forLock: path), mode: 0o644)
        return true
    }

    /// Where the holder of the lock at `path` records itself: `ifmeterd.lock`
    /// -> `ifmeterd.pid`.
    package static func livenessPath(forLock path: String) -> String {
        (path.hasSuffix(".lock") ? String(path.dropLast(5)) : path) + ".pid"
    }

    /// A process's start time in clock ticks since boot (/proc/PID/stat
    /// field 22): with the pid it names one process, never a later one that
    /// reuses the pid.
    static func processStartTime(_ pid: pid_t) -> UInt64? {
        guard let bytes = try? readBytes("/proc/\(pid)/stat"), let close = bytes.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        // Fields after the command name (which may hold spaces and parentheses) start at field 3.
        let fields = bytes[(close + 1)...].split(separator: UInt8(ascii: " "))
        guard fields.count > 19 else { return nil }
        return UInt64(String(decoding: fields[19], as: UTF8.self))
    }

    /// Where a file that could not be used is kept for a person to look
    /// at: `path.SUFFIX-UNIXTIME`, or `-2`, `-3`... after it, never the
    /// name of a file already there.
    package static func asideName(for path: String, suffix: String, now: Int64) -> String {
        var target = "\(path).\(suffix)-\(now)"
        var attempt = 1
        while exists(target) {
            attempt += 1
            target = "\(path).\(suffix)-\(now)-\(attempt)"
        }
        return target
    }

    /// Moves a file aside (`asideName`), never over another file.
    package static func moveAside(_ path: String, suffix: String, now: Int64) throws -> String {
        let target = asideName(for: path, suffix: suffix, now: now)
        if rename(path, target) != 0 { throw SystemError("rename to \(target)", path: path, errno: errno) }
        return target
    }

    /// Creates an empty regular file with exactly `mode`, failing if
    /// anything already exists at path (a symlink included).
    package static func createEmptyFile(_ path: String, mode: mode_t) throws {
        let fd = retrying { open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode) }
        if fd < 0 { throw SystemError("create", path: path, errno: errno) }
        defer { close(fd) }
        if fchmod(fd, mode) != 0 { throw SystemError("fchmod", path: path, errno: errno) }
    }

    /// Clears the permission bits `mode` lacks from a regular file this
    /// process owns; it never adds one (a store its owner made read-only
    /// stays so). Anything else (missing, a symlink, another owner's) is
    /// left as it is.
    package static func restrictMode(_ path: String, to mode: mode_t) {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid() else { return }
        let restricted = info.st_mode & 0o7777 & mode
        if restricted != info.st_mode & 0o7777 { chmod(path, restricted) }
    }

    /// Whether this process may not read path because of its permissions.
    package static func isReadDenied(_ path: String) -> Bool {
        access(path, R_OK) != 0 && errno == EACCES
    }

    /// The name of path's group ("gid N" when it has none).
    package static func groupName(of path: String) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else { return "?" }
        var group = group()
        var buffer = [CChar](repeating: 0, count: 4096)
        var result: UnsafeMutablePointer<group>?
        guard getgrgid_r(info.st_gid, &group, &buffer, buffer.count, &result) == 0, result != nil, let name = group.gr_name else {
            return "gid \(info.st_gid)"
        }
        return String(cString: name)
    }

    /// Root takes the user and group of path's owner, with no other group;
    /// anyone else, or for a path root owns, nothing changes. What a
    /// process then creates beside path is its owner's.
    package static func becomeOwner(of path: String) throws(SystemError) {
        var info = stat()
        guard geteuid() == 0, stat(path, &info) == 0, info.st_uid != 0 else { return }
        // As root, setgid and setuid set the real, effective and saved ids.
        guard setgroups(0, nil) == 0, setgid(info.st_gid) == 0, setuid(info.st_uid) == 0 else {
            throw SystemError("take its owner's user \(info.st_uid)", path: path, errno: errno)
        }
    }

    /// Whether the account database puts this user in path's group while
    /// this process does not carry it: `usermod -aG` applies from the next
    /// login, so the user is to log in again, not to ask to be added.
    package static func groupJoinedButNotInSession(of path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        let gid = info.st_gid
        var carried = [gid_t](repeating: 0, count: Int(NGROUPS_MAX) + 1)
        let count = getgroups(Int32(carried.count), &carried)
        if getegid() == gid || getgid() == gid || (count > 0 && carried.prefix(Int(count)).contains(gid)) { return false }
        var account = passwd()
        var buffer = [CChar](repeating: 0, count: 4096)
        var result: UnsafeMutablePointer<passwd>?
        guard getpwuid_r(getuid(), &account, &buffer, buffer.count, &result) == 0, result != nil, let name = account.pw_name else { return false }
        if account.pw_gid == gid { return true }
        var listed = [gid_t](repeating: 0, count: Int(NGROUPS_MAX) + 1)
        var listedCount = Int32(listed.count)
        guard getgrouplist(name, account.pw_gid, &listed, &listedCount) >= 0 else { return false }
        return listed.prefix(Int(listedCount)).contains(gid)
    }

    /// The working directory, or nil when it cannot be named (removed).
    package static func currentDirectory() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return nil }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The path of the running executable.
    package static func executablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

extension FileSystem {
    /// Whether the process that took the lock at path (the daemon on its
    /// lock file) is running. Readers never open the lock itself: it is
    /// 0600, and a lock anyone can open is one anyone can fake. They read
    /// the liveness file instead and trust it only when another user could
    /// not have written it: owned by the lock file's owner, writable by
    /// that owner alone, naming a process (pid and start time) that runs
    /// now as that owner (or as root).
    package static func isLockedByAnotherProcess(_ path: String) -> Bool {
        let record = livenessPath(forLock: path)
        var lock = stat()
        var info = stat()
        guard lstat(path, &lock) == 0, lstat(record, &info) == 0, info.st_mode & S_IFMT == S_IFREG,
            info.st_uid == lock.st_uid, info.st_mode & 0o022 == 0,
            let text = try? readText(record)
        else { return false }
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard words.count == 2, let pid = pid_t(words[0]), pid > 0, pid != getpid(), let start = UInt64(words[1]),
            processStartTime(pid) == start
        else { return false }
        var process = stat()
        guard stat("/proc/\(pid)", &process) == 0 else { return false }
        return process.st_uid == info.st_uid || process.st_uid == 0
    }

    /// Whether fd is a terminal.
    package static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }

    /// Waits until fd is readable or `seconds` pass; true when readable.
    package static func waitReadable(_ fd: Int32, seconds: Double) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let result = poll(&entry, 1, Int32(seconds * 1000))
        return result > 0 && entry.revents & Int16(POLLIN) != 0
    }

    /// Sleeps, resuming after signals that do not end the process.
    package static func sleep(seconds: Double) {
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }
}

extension FileSystem {
    /// O_PATH, which Swift's Glibc module leaves out (a _GNU_SOURCE flag):
    /// 010000000 on every architecture Swift runs on (asm-generic/fcntl.h).
    private static let openPathOnly: Int32 = 0o10000000

    /// Replaces path's contents atomically for readers that poll it (like
    /// node_exporter's textfile collector): a temporary file beside it whose
    /// name does not end like the target's, given `mode` whatever the umask,
    /// fsynced, renamed over path (replacing a symlink, FIFO or file there
    /// rather than writing through it), then the directory fsynced so the
    /// rename survives a power cut. With `synced` false neither is fsynced:
    /// readers still never see a partial file, and a power cut may leave the
    /// old contents or an empty file, for a file its writer replaces soon.
    ///
    /// The directory may be shared with other writers: the target is never
    /// opened or read, and the temporary name is unpredictable (64 random
    /// bits) and created O_EXCL|O_NOFOLLOW, so nothing planted in advance
    /// (a symlink, a FIFO, a directory at a guessed name) is written
    /// through, waited on or stands in the way; a name already taken is
    /// skipped, never removed.
    ///
    /// The directory is opened once, and the check of the target, the
    /// temporary file, the rename and the directory's fsync all go through
    /// that descriptor (fstatat, openat, renameat): by path, a directory
    /// swapped for a symlink between the check and the rename (by anyone
    /// who may write its parent) moved the rename into the directory the
    /// link names, over a device the check never saw (a root's `graph
    /// --svg` into /dev). Messages name `path` as given.
    package static func writeAtomically(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644, synced: Bool = true) throws {
        // `dir/` names a directory; its last name is no file's name.
        if path.hasSuffix("/") {
            throw SystemError("replace", path: path, errno: EISDIR, explanation: "a path ending in / names a directory, not a file")
        }
        let directory = directoryName(path)
        let name = path.split(separator: "/").last.map(String.init) ?? path
        // O_RDONLY, so that it can be fsynced; a directory this process
        // may write but not list is still written, through O_PATH, unsynced.
        var directoryFD = retrying { open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        if directoryFD < 0 && errno == EACCES { directoryFD = retrying { open(directory, openPathOnly | O_DIRECTORY | O_CLOEXEC) } }
        if directoryFD < 0 { throw SystemError("open its directory \(directory)", path: path, errno: errno) }
        defer { close(directoryFD) }
        // Judged on the directory opened, which every step below goes
        // through: a check of the path before could be answered by one
        // directory and the write land in another.
        if let root = kernelTree(ofDirectoryDescriptor: directoryFD) {
            throw SystemError("replace", path: path, errno: EPERM, explanation: "in \(root), among the kernel's files; nothing written there")
        }
        // The rename would replace a device as it replaces a file (`--svg
        // /dev/null` as root: the system's /dev/null), and cannot replace a
        // directory (`--svg dir`). A FIFO or socket holds nothing to lose,
        // and one planted in a shared directory must not stop the writer.
        var target = stat()
        if fstatat(directoryFD, name, &target, AT_SYMLINK_NOFOLLOW) == 0, let kind = nonFileKind(mode: target.st_mode),
            kind == .device || kind == .directory
        {
            throw SystemError("replace", path: path, errno: EEXIST, explanation: "\(kind) stands there, left untouched")
        }
        var temporary = ""
        var fd: Int32 = -1
        for _ in 0..<8 {
            temporary = ".\(name).\(String(UInt64.random(in: .min ... .max), radix: 16)).tmp"
            fd = retrying { openat(directoryFD, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode) }
            if fd >= 0 || errno != EEXIST { break }
        }
        if fd < 0 { throw SystemError("create a temporary file beside it", path: path, errno: errno) }
        // Errors name `path`: the temporary file is gone when they are read.
        do {
            if fchmod(fd, mode) != 0 { throw SystemError("fchmod", path: path, errno: errno) }
            try writeAll(fd, bytes, path: path)
            if synced, fsync(fd) != 0 { throw SystemError("fsync", path: path, errno: errno) }
            close(fd)
            fd = -1
            if renameat(directoryFD, temporary, directoryFD, name) != 0 { throw SystemError("rename into place", path: path, errno: errno) }
        } catch {
            if fd >= 0 { close(fd) }
            unlinkat(directoryFD, temporary, 0)
            throw error
        }
        // An O_PATH descriptor cannot be fsynced (EBADF): nothing more to do.
        if synced { fsync(directoryFD) }
    }
}


/// An open file that grows by whole records: a write the disk cannot take
/// in full (ENOSPC, EIO) is cut back off, so the file never ends inside a
/// record this process wrote. Not synced: it outlives the process, and a
/// power cut may lose its tail like any page cache.
package final class AppendFile {
    package let path: String
    private let descriptor: Int32
    package private(set) var size: Int

    /// Takes over `descriptor`, an open regular file, positioned by
    /// O_APPEND or not: every write goes to its end.
    package init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
        var status = stat()
        size = fstat(descriptor, &status) == 0 ? Int(status.st_size) : 0
    }

    deinit { close(descriptor) }

    /// Whether `path` still names this file: not removed, renamed away or
    /// replaced by another since it was opened.
    package var isAtItsPath: Bool {
        var open = stat()
        var named = stat()
        return fstat(descriptor, &open) == 0 && lstat(path, &named) == 0 && open.st_dev == named.st_dev && open.st_ino == named.st_ino
    }

    /// Appends `bytes` whole, or leaves the file as it was and throws.
    package func append(_ bytes: [UInt8]) throws {
        do {
            try FileSystem.writeAll(descriptor, bytes, path: path, at: size)
            size += bytes.count
        } catch {
            _ = FileSystem.retrying { ftruncate(descriptor, off_t(size)) }
            throw error
        }
    }

    /// Empties the file and writes `bytes` as its whole content.
    package func replaceContents(with bytes: [UInt8]) throws {
        if FileSystem.retrying({ ftruncate(descriptor, 0) }) != 0 { throw SystemError("truncate", path: path, errno: errno) }
        size = 0
        try append(bytes)
    }
}
