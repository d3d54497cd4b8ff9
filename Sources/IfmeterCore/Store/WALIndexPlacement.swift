import CKernel
import Glibc

/// Puts the store's WAL index (`ifmeter.db-shm`) in memory: a file in a
/// runtime directory (a tmpfs, /run/ifmeter as packaged) bind-mounted over
/// the index's place beside the store; and puts it back.
///
/// Why: SQLite rewrites the index's header and hash pages at every commit,
/// and they were a third to two fifths of what a commit dirtied
/// (bench/TRIES.md, "Writes: the WAL index bound from /run"), yet nothing
/// in them outlives a reboot: the first connection after one rebuilds the
/// index from the WAL. SQLite finds the index only by the store's path plus
/// `-shm`, and neither Debian's build (no `SQLITE_SHM_DIRECTORY`) nor a
/// setting moves it; a mount does, for every process: the daemon, `ifmeter`
/// and any other SQLite program open the one index by the store's path, as
/// before, and it is simply never written back to a disk.
///
/// The rule that keeps it safe: two processes must never use two different
/// files as the index of one store at once (each would miss the other's
/// commits, and the last to close would checkpoint a stale view). So the
/// mount is made, and undone, only while no process has the store open,
/// under a write lock on the store file's lock bytes: every connection to a
/// store in WAL mode holds a shared lock there from before it opens the
/// index until it closes (os_unix.c and pager.c), so while the helper
/// holds its lock no connection can reach either index file, and any that
/// had one open makes the lock fail. A process in a mount namespace that
/// never sees the mount (made before it, with private propagation) is
/// outside the rule (README "Limits").
///
/// The two directories belong to the daemon's user, and this runs as root:
/// every file is opened relative to its directory's descriptor, never
/// through a symlink, and must be a regular file with one link; the mount
/// is made on the descriptors (/proc/self/fd), which a swap of names after
/// the checks cannot redirect.
package enum WALIndexPlacement {
    /// What `place` found or did.
    package enum Placement: Sendable, Equatable {
        /// The index beside the store is now the file in the runtime directory.
        case placed
        /// It already was (a restart of the daemon).
        case alreadyPlaced
        /// Left as it is: process `pid` has the store open (0 when the
        /// lock's holder is in another PID namespace). The next start
        /// tries again.
        case inUse(pid: Int32)
        /// Something else is mounted at the index's path: left alone.
        case otherMount
        /// The runtime directory is not a tmpfs: a mount would only move
        /// the writes to another disk.
        case runtimeDirectoryOnDisk
    }

    /// What `remove` found or did.
    package enum Removal: Sendable, Equatable {
        /// The index is the file beside the store again.
        case removed
        /// Nothing is mounted there.
        case notPlaced
        /// Left in memory: process `pid` has the store open.
        case inUse(pid: Int32)
    }

    /// The file name of the index, beside the store and in the runtime directory.
    static let indexName = "\(CounterStore.fileName)-shm"

    /// The index's path in `directory`: beside the store in the state
    /// directory, or the file bound over it in the runtime directory.
    package static func indexPath(in directory: String) -> String { "\(directory)/\(indexName)" }

    /// SQLite's lock bytes in a database file (os_unix.c: the pending
    /// byte at 1 GiB, the reserved byte, then 510 shared bytes).
    static let storeLockBytes: (start: off_t, length: off_t) = (0x4000_0000, 512)

    /// Binds `runtimeDirectory/ifmeter.db-shm` over the store's index,
    /// creating both files (a new one owned like the store directory, mode
    /// 0640 like the store) when missing. Needs CAP_SYS_ADMIN
    /// (ifmeterd.service runs it as root, before the daemon).
    package static func place(storeDirectory: String, runtimeDirectory: String) throws(SystemError) -> Placement {
        let store = try openDirectory(storeDirectory)
        defer { close(store) }
        let runtime = try openDirectory(runtimeDirectory)
        defer { close(runtime) }
        switch ifm_is_tmpfs(runtime) {
        case 1: break
        case 0: return .runtimeDirectoryOnDisk
        default: throw SystemError("statfs", path: runtimeDirectory, errno: errno)
        }
        var owner = stat()
        guard fstat(store, &owner) == 0 else { throw SystemError("stat", path: storeDirectory, errno: errno) }
        let indexPath = Self.indexPath(in: storeDirectory)
        let memoryPath = Self.indexPath(in: runtimeDirectory)

        let onDisk = try openIndex(in: store, path: indexPath, owner: owner)
        defer { close(onDisk) }
        if try isMountRoot(onDisk, path: indexPath) {
            // Ours from an earlier start, or someone else's.
            var bound = stat()
            var memory = stat()
            guard fstat(onDisk, &bound) == 0, fstatat(runtime, indexName, &memory, AT_SYMLINK_NOFOLLOW) == 0,
                  bound.st_dev == memory.st_dev, bound.st_ino == memory.st_ino else { return .otherMount }
            return .alreadyPlaced
        }
        let storeLock = try lockStore(in: store, storeDirectory: storeDirectory)
        defer { storeLock.release() }
        if let holder = storeLock.holder { return .inUse(pid: holder) }
        let inMemory = try openIndex(in: runtime, path: memoryPath, owner: owner)
        defer { close(inMemory) }
        guard ifm_is_tmpfs(inMemory) == 1 else { return .runtimeDirectoryOnDisk }
        guard mount("/proc/self/fd/\(inMemory)", "/proc/self/fd/\(onDisk)", nil, UInt(MS_BIND), nil) == 0 else {
            throw SystemError("bind \(memoryPath) over it", path: indexPath, errno: errno)
        }
        return .placed
    }

    /// Undoes `place`: unmounts the index beside the store and deletes the
    /// file in the runtime directory, unless a process has the store open.
    package static func remove(storeDirectory: String, runtimeDirectory: String) throws(SystemError) -> Removal {
        let store = try openDirectory(storeDirectory)
        defer { close(store) }
        let indexPath = Self.indexPath(in: storeDirectory)
        let index = FileSystem.retrying { openat(store, indexName, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) }
        if index < 0 {
            // Nothing there, or a symlink: no mount of ours either way.
            guard errno == ENOENT || errno == ELOOP else { throw SystemError("open", path: indexPath, errno: errno) }
            return .notPlaced
        }
        let mounted = try isMountRoot(index, path: indexPath)
        close(index)  // an open file keeps its mount busy
        guard mounted else { return .notPlaced }
        let storeLock = try lockStore(in: store, storeDirectory: storeDirectory)
        defer { storeLock.release() }
        if let holder = storeLock.holder { return .inUse(pid: holder) }
        // By name, not following a symlink: the name is a mount point, which
        // no process in this namespace can rename or replace meanwhile.
        guard umount2(indexPath, Int32(UMOUNT_NOFOLLOW)) == 0 else {
            if errno == EBUSY { return .inUse(pid: 0) }
            throw SystemError("unmount", path: indexPath, errno: errno)
        }
        if let runtime = try? openDirectory(runtimeDirectory) {
            unlinkat(runtime, indexName, 0)
            close(runtime)
        }
        return .removed
    }

    private static func openDirectory(_ path: String) throws(SystemError) -> Int32 {
        let fd = FileSystem.retrying { open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard fd >= 0 else { throw SystemError("open", path: path, errno: errno) }
        return fd
    }

    /// Opens an index file in `directory`, creating it if missing: never
    /// through a symlink, a regular file with one link (a hard link to
    /// someone else's file is refused), and only one this call created is
    /// given the store directory's owner, so the daemon can write whichever
    /// of the two files it finds at the index's path.
    private static func openIndex(in directory: Int32, path: String, owner: stat) throws(SystemError) -> Int32 {
        var created = true
        var fd = FileSystem.retrying { openat(directory, indexName, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o640) }
        if fd < 0 && errno == EEXIST {
            created = false
            fd = FileSystem.retrying { openat(directory, indexName, O_RDWR | O_NOFOLLOW | O_CLOEXEC) }
        }
        guard fd >= 0 else { throw SystemError("open", path: path, errno: errno) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_nlink == 1 else {
            close(fd)
            throw SystemError("open", path: path, errno: EINVAL, explanation: "not a regular file of its own")
        }
        if created && (info.st_uid != owner.st_uid || info.st_gid != owner.st_gid) {
            guard fchown(fd, owner.st_uid, owner.st_gid) == 0 else {
                let saved = errno
                close(fd)
                throw SystemError("chown", path: path, errno: saved)
            }
        }
        return fd
    }

    /// The write lock on the store file's SQLite lock bytes, held until
    /// `release`, or who holds them.
    private struct StoreLock {
        /// The store file, -1 when there is none yet (then no process can
        /// have it open, and there is nothing to lock).
        let descriptor: Int32
        /// The process holding a lock there (0 when unknown), nil when
        /// this one took it.
        let holder: Int32?

        func release() { if descriptor >= 0 { close(descriptor) } }
    }

    private static func lockStore(in directory: Int32, storeDirectory: String) throws(SystemError) -> StoreLock {
        let path = "\(storeDirectory)/\(CounterStore.fileName)"
        let fd = FileSystem.retrying { openat(directory, CounterStore.fileName, O_RDWR | O_NOFOLLOW | O_CLOEXEC) }
        if fd < 0 {
            guard errno == ENOENT else { throw SystemError("open", path: path, errno: errno) }
            return StoreLock(descriptor: -1, holder: nil)
        }
        do {
            return StoreLock(descriptor: fd, holder: try lockOrHolder(fd, storeLockBytes, path: path))
        } catch {
            close(fd)
            throw error
        }
    }

    private static func isMountRoot(_ fd: Int32, path: String) throws(SystemError) -> Bool {
        switch ifm_is_mount_root(fd) {
        case 0: return false
        case 1: return true
        default: throw SystemError("tell whether a mount is there", path: path, errno: errno)
        }
    }

    /// Takes a write lock on `bytes` of `fd` without waiting, held until
    /// the descriptor closes; nil when taken, else the holder's pid (0 when
    /// it is in another PID namespace or let go meanwhile).
    private static func lockOrHolder(_ fd: Int32, _ bytes: (start: off_t, length: off_t), path: String) throws(SystemError) -> Int32? {
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = bytes.start
        lock.l_len = bytes.length
        var request = lock
        if fcntl(fd, F_SETLK, &request) == 0 { return nil }
        guard errno == EAGAIN || errno == EACCES else { throw SystemError("lock", path: path, errno: errno) }
        return fcntl(fd, F_GETLK, &lock) == 0 && lock.l_type != Int16(F_UNLCK) ? max(lock.l_pid, 0) : 0
    }
}
