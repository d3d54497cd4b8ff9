import CKernel
import Glibc

/// Puts the store's WAL index (`ifmeter.db-shm`) in memory: a file in a
/// runtime directory (a tmpfs, /run/ifmeter as packaged) bind-mounted over
/// the index's place beside the store.
///
/// Why: SQLite rewrites the index's header and hash pages at every commit,
/// and they were a third to two fifths of what a commit dirtied
/// (bench/TRIES.md, "Writes: the WAL index bound from /run"), yet nothing in them outlives a
/// reboot: the first connection after one rebuilds the index from the WAL.
/// SQLite finds the index only by the store's path plus `-shm`, and neither
/// Debian's build (no `SQLITE_SHM_DIRECTORY`) nor a setting moves it; a
/// mount does, for every process: the daemon, `ifmeter` and any other
/// SQLite program on the host open the one index by the store's path, as
/// before, and it is simply never written back to a disk.
///
/// The rule that keeps it safe: two processes must never use two different
/// files as the index of one store at once (each would miss the other's
/// commits, and the last to close would checkpoint a stale view). So the
/// mount is made only while no process has the index beside the store open
/// (SQLite's unix VFS holds a shared lock on its byte 128 for as long as a
/// connection has the index mapped), under a write lock on that byte, held
/// across the mount so that no connection can start on the old file in
/// between; and it is never undone under a process that uses it (`umount`
/// refuses a busy mount; the package's postrm tries it on removal).
package enum WALIndexPlacement {
    /// What `place` found or did.
    package enum Outcome: Sendable, Equatable {
        /// The index beside the store is now the file in the runtime directory.
        case placed
        /// It already was (a restart of the daemon).
        case alreadyPlaced
        /// Left beside the store: process `pid` has it open (0 when the
        /// lock's holder is in another PID namespace). The next start
        /// tries again.
        case inUse(pid: Int32)
        /// Something else is mounted at the index's path: left alone.
        case otherMount
        /// The runtime directory is not a tmpfs: a mount would only move
        /// the writes to another disk.
        case runtimeDirectoryOnDisk
    }

    /// SQLite's "dead man switch" lock byte in a `-shm` file (os_unix.c,
    /// `UNIX_SHM_DMS`): every connection with the index mapped holds a
    /// shared lock on it.
    static let connectionLockByte: off_t = 128

    /// The index's path beside the store in `storeDirectory`.
    package static func indexPath(storeDirectory: String) -> String {
        "\(storeDirectory)/\(CounterStore.fileName)-shm"
    }

    /// Binds `runtimeDirectory/ifmeter.db-shm` over the store's index,
    /// creating both files (owned like the store directory, mode 0640 like
    /// the store) when missing. Needs CAP_SYS_ADMIN (ifmeterd.service runs
    /// it as root, before the daemon).
    package static func place(storeDirectory: String, runtimeDirectory: String) throws(SystemError) -> Outcome {
        let index = indexPath(storeDirectory: storeDirectory)
        let memory = "\(runtimeDirectory)/\(CounterStore.fileName)-shm"
        var directory = stat()
        guard stat(storeDirectory, &directory) == 0 else { throw SystemError("stat", path: storeDirectory, errno: errno) }
        switch ifm_is_tmpfs(runtimeDirectory) {
        case 1: break
        case 0: return .runtimeDirectoryOnDisk
        default: throw SystemError("statfs", path: runtimeDirectory, errno: errno)
        }

        // Already a mount point: ours from an earlier start, or someone else's.
        var current = stat()
        if lstat(index, &current) == 0 {
            var placed = stat()
            if stat(memory, &placed) == 0 && placed.st_dev == current.st_dev && placed.st_ino == current.st_ino { return .alreadyPlaced }
            switch ifm_is_mount_root(index) {
            case 0: break
            case 1: return .otherMount
            default: throw SystemError("tell whether a mount is there", path: index, errno: errno)
            }
        }

        let onDisk = try openIndexFile(index, owner: directory)
        defer { close(onDisk) }
        // The write lock fails while any connection holds its shared lock,
        // and while held it keeps new connections off the file on disk
        // (SQLite gives up on a busy index and opens it again by its path,
        // which by then leads to the file in memory).
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = connectionLockByte
        lock.l_len = 1
        if fcntl(onDisk, F_SETLK, &lock) != 0 {
            guard errno == EAGAIN || errno == EACCES else { throw SystemError("lock", path: index, errno: errno) }
            var holder = flock()
            holder.l_type = Int16(F_WRLCK)
            holder.l_whence = Int16(SEEK_SET)
            holder.l_start = connectionLockByte
            holder.l_len = 1
            let pid = fcntl(onDisk, F_GETLK, &holder) == 0 && holder.l_type != Int16(F_UNLCK) ? holder.l_pid : 0
            return .inUse(pid: pid)
        }
        let inMemory = try openIndexFile(memory, owner: directory)
        defer { close(inMemory) }
        // Both ends by their descriptors, never by their paths again: the
        // two directories belong to the daemon's user, who could otherwise
        // swap a checked file for a symlink before the mount (which
        // follows them) and have root bind a file it writes over
        // /etc/passwd.
        guard mount("/proc/self/fd/\(inMemory)", "/proc/self/fd/\(onDisk)", nil, UInt(MS_BIND), nil) == 0 else {
            throw SystemError("bind \(memory) over it", path: index, errno: errno)
        }
        return .placed
    }

    /// Opens (creating) an index file: never through a symlink, and a new
    /// one owned like the store directory, so the daemon can write it
    /// whichever of the two files it finds at the path.
    private static func openIndexFile(_ path: String, owner: stat) throws(SystemError) -> Int32 {
        let fd = FileSystem.retrying { open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o640) }
        guard fd >= 0 else { throw SystemError("open", path: path, errno: errno) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw SystemError("open", path: path, errno: EINVAL, explanation: "not a regular file")
        }
        if info.st_uid != owner.st_uid || info.st_gid != owner.st_gid, info.st_size == 0 {
            guard fchown(fd, owner.st_uid, owner.st_gid) == 0 else {
                let saved = errno
                close(fd)
                throw SystemError("chown", path: path, errno: saved)
            }
        }
        return fd
    }
}
