import Glibc

extension FileSystem {
    /// Creates the directory and its parents, like `mkdir -p`.
    package static func createDirectory(_ path: String, mode: mode_t = 0o755) throws {
        if isDirectory(path) { return }
        let parent = directoryName(path)
        if parent != path && !parent.isEmpty { try createDirectory(parent, mode: mode) }
        if case .failure(let error) = valueOrErrno("mkdir", path: path, { mkdir(path, mode) }), error.errno != EEXIST { throw error }
        if !isDirectory(path) { throw SystemError("mkdir", path: path, errno: ENOTDIR) }
    }

    /// Writes bytes to a new file or replaces its contents.
    package static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644) throws {
        let fd = try valueOrErrno("open", path: path) { open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode) }.get()
        defer { close(fd) }
        try writeAll(fd, bytes, path: path)
    }

    /// Writes all of `bytes` at the file position, or at `fileOffset` (one pwrite, no seek).
    static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String, at fileOffset: Int? = nil) throws {
        var offset = 0
        while offset < bytes.count {
            offset += try valueOrErrno("write", path: path) {
                bytes.withUnsafeBytes { buffer in
                    let start = buffer.baseAddress! + offset
                    if let fileOffset { return pwrite(fd, start, buffer.count - offset, off_t(fileOffset + offset)) }
                    return Glibc.write(fd, start, buffer.count - offset)
                }
            }.get()
        }
    }

    /// Renames a file within one directory; false when there was none to rename (or it could not be).
    package static func move(_ path: String, to newPath: String) -> Bool { rename(path, newPath) == 0 }

    /// Removes a file if it is there.
    package static func remove(_ path: String) { unlink(path) }

    /// Creates an empty regular file of exactly `mode`; fails if anything (a symlink too) exists at path.
    package static func createEmptyFile(_ path: String, mode: mode_t) throws {
        let fd = try valueOrErrno("create", path: path) { open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode) }.get()
        defer { close(fd) }
        _ = try valueOrErrno("fchmod", path: path) { fchmod(fd, mode) }.get()
    }

    /// Clears the permission bits `mode` lacks from a regular file this process owns, never adding one
    /// (a store made read-only stays so); anything else (missing, a symlink, another owner's) is left alone.
    package static func restrictMode(_ path: String, to mode: mode_t) {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid() else { return }
        let restricted = info.st_mode & 0o7777 & mode
        if restricted != info.st_mode & 0o7777 { chmod(path, restricted) }
    }

    /// O_PATH, which Swift's Glibc module leaves out (a _GNU_SOURCE flag): 010000000 on every
    /// architecture Swift runs on (asm-generic/fcntl.h).
    private static let openPathOnly: Int32 = 0o10000000

    /// Replaces path's contents atomically for readers that poll it (node_exporter's textfile collector):
    /// a temporary file renamed over it, so a symlink or FIFO there is replaced, never written through.
    /// `synced` false: nothing is fsynced, and a power cut may leave the old contents or an empty file.
    package static func writeAtomically(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644, synced: Bool = true) throws {
        if path.hasSuffix("/") {
            throw SystemError("replace", path: path, errno: EISDIR, explanation: "a path ending in / names a directory, not a file")
        }
        let directory = directoryName(path)
        let name = path.split(separator: "/").last.map(String.init) ?? path
        // Every step goes through one descriptor (fstatat, openat, renameat): by path, a directory swapped
        // for a symlink before the rename moves it where the link leads. O_RDONLY, to fsync it; O_PATH,
        // unsynced, for a directory this process may write but not list.
        let openingDirectory = "open its directory \(directory)"
        var opened = valueOrErrno(openingDirectory, path: path) { open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        if case .failure(let error) = opened, error.errno == EACCES {
            opened = valueOrErrno(openingDirectory, path: path) { open(directory, openPathOnly | O_DIRECTORY | O_CLOEXEC) }
        }
        let directoryFD = try opened.get()
        defer { close(directoryFD) }
        // Judged on the directory opened: a check of the path could be answered by one directory
        // and the write land in another.
        if let root = kernelTree(ofDirectoryDescriptor: directoryFD) {
            throw SystemError("replace", path: path, errno: EPERM, explanation: "in \(root), among the kernel's files; nothing written there")
        }
        // The rename would replace a device as it replaces a file (`--svg /dev/null` as root), and
        // cannot replace a directory. A FIFO or socket holds nothing to lose, and one planted in a
        // shared directory must not stop the writer.
        var target = stat()
        if fstatat(directoryFD, name, &target, AT_SYMLINK_NOFOLLOW) == 0, let kind = nonFileKind(mode: target.st_mode),
            kind == .device || kind == .directory
        {
            throw SystemError("replace", path: path, errno: EEXIST, explanation: "\(kind) stands there, left untouched")
        }
        // An unpredictable name (64 random bits), created O_EXCL|O_NOFOLLOW: nothing planted at a
        // guessed name is written through or waited on, and a name already taken is skipped, never
        // removed. The name does not end like the target's, which a reader may match by suffix.
        var temporary = ""
        var fd: Int32 = -1
        for attempt in 1...8 {
            temporary = ".\(name).\(String(UInt64.random(in: .min ... .max), radix: 16)).tmp"
            let created = valueOrErrno("create a temporary file beside it", path: path) {
                openat(directoryFD, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
            }
            if case .failure(let error) = created, error.errno == EEXIST, attempt < 8 { continue }
            fd = try created.get()
            break
        }
        // Errors name `path`, as the temporary is gone when they are read; fchmod: `mode` despite the umask.
        do {
            _ = try valueOrErrno("fchmod", path: path) { fchmod(fd, mode) }.get()
            try writeAll(fd, bytes, path: path)
            if synced { _ = try valueOrErrno("fsync", path: path) { fsync(fd) }.get() }
            close(fd)
            fd = -1
            _ = try valueOrErrno("rename into place", path: path) { renameat(directoryFD, temporary, directoryFD, name) }.get()
        } catch {
            if fd >= 0 { close(fd) }
            unlinkat(directoryFD, temporary, 0)
            throw error
        }
        // So that the rename survives a power cut; an O_PATH descriptor cannot be fsynced (EBADF).
        if synced { fsync(directoryFD) }
    }
}
