import Glibc

extension FileSystem {
    /// Takes an exclusive flock without waiting; false when another process holds one.
    package static func tryLock(_ fd: Int32, path: String) throws -> Bool {
        switch valueOrErrno("flock", path: path, { flock(fd, LOCK_EX | LOCK_NB) }) {
        case .success: return true
        case .failure(let error) where error.errno == EWOULDBLOCK: return false
        case .failure(let error): throw error
        }
    }

    /// Holds an exclusive flock on path (created if missing) for the process's life, false when another
    /// holds it; then records this process for readers (`livenessPath`) and people (`pidPath`: the pid alone).
    package static func lockExclusively(_ path: String, recordingLiveness: Bool = true) throws -> Bool {
        // flock needs only a read descriptor: a lock file others can open is one they can hold, keeping
        // the daemon from starting. So it is 0600, never followed as a symlink, and one others could
        // have opened is replaced first: a descriptor held on the old file then locks nothing.
        var fd: Int32 = -1
        for _ in 0..<3 {
            switch valueOrErrno("open", path: path, { open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600) }) {
            case .success(let opened): fd = opened
            case .failure(let error) where error.errno == ELOOP: fd = -1
            case .failure(let error): throw error
            }
            var info = stat()
            if fd >= 0 && fstat(fd, &info) == 0 && info.st_uid == geteuid() && info.st_mode & 0o077 == 0 && info.st_mode & S_IFMT == S_IFREG {
                break
            }
            if fd >= 0 { close(fd) }
            fd = -1
            let unlinked = valueOrErrno("replace a lock file others could open", path: path) { unlink(path) }
            if case .failure(let error) = unlinked, error.errno != ENOENT { throw error }
        }
        if fd < 0 { throw SystemError("open", path: path, errno: EAGAIN) }
        if case .failure(let error) = valueOrErrno("flock", path: path, { flock(fd, LOCK_EX | LOCK_NB) }) {
            close(fd)
            if error.errno == EWOULDBLOCK { return false }
            throw error
        }
        guard recordingLiveness else { return true }
        let start = processStartTime(getpid()) ?? 0
        try writeAtomically(Array("\(getpid())\n".utf8), to: pidPath(forLock: path), mode: 0o644)
        try writeAtomically(Array("\(getpid()) \(start)\n".utf8), to: livenessPath(forLock: path), mode: 0o644)
        return true
    }

    /// Where the holder of the lock at `path` records itself for readers: `ifmeterd.lock` -> `ifmeterd.live`.
    package static func livenessPath(forLock path: String) -> String { stem(ofLock: path) + ".live" }

    /// Its pid alone, as `kill -HUP $(cat ifmeterd.pid)` and systemd's PIDFile= read one.
    package static func pidPath(forLock path: String) -> String { stem(ofLock: path) + ".pid" }

    private static func stem(ofLock path: String) -> String { path.hasSuffix(".lock") ? String(path.dropLast(5)) : path }

    /// A process's start time in clock ticks since boot (/proc/PID/stat field 22): with the pid it
    /// names one process, never a later one that reuses the pid.
    static func processStartTime(_ pid: pid_t) -> UInt64? {
        guard let bytes = try? readBytes("/proc/\(pid)/stat"), let close = bytes.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        // Fields after the command name (which may hold spaces and parentheses) start at field 3.
        let fields = bytes[(close + 1)...].split(separator: UInt8(ascii: " "))
        guard fields.count > 19 else { return nil }
        return UInt64(String(decoding: fields[19], as: UTF8.self))
    }

    /// Whether the process that took the lock at path is running. Readers never open the lock: it is
    /// 0600, as a lock anyone can open is one anyone can fake. They read the liveness file instead,
    /// trusted only when another user could not have written it.
    package static func isLockedByAnotherProcess(_ path: String) -> Bool { lockHolder(path) != nil }

    /// The process that took the lock at path and runs now, by its liveness file, as `isLockedByAnotherProcess`.
    package static func lockHolder(_ path: String) -> pid_t? {
        // Owned by the lock file's owner, writable by that owner alone, naming a process (pid and
        // start time) that runs now as that owner or as root.
        let record = livenessPath(forLock: path)
        var lock = stat()
        var info = stat()
        guard lstat(path, &lock) == 0, lstat(record, &info) == 0, info.st_mode & S_IFMT == S_IFREG,
            info.st_uid == lock.st_uid, info.st_mode & 0o022 == 0,
            let text = try? readText(record)
        else { return nil }
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard words.count == 2, let pid = pid_t(words[0]), pid > 0, pid != getpid(), let start = UInt64(words[1]),
            processStartTime(pid) == start
        else { return nil }
        var process = stat()
        guard stat("/proc/\(pid)", &process) == 0, process.st_uid == info.st_uid || process.st_uid == 0 else { return nil }
        return pid
    }
}
