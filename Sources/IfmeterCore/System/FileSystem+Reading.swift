import Glibc

extension FileSystem {
    /// The whole file, or nil when it does not exist; refused when longer than `limit`. Opened
    /// without blocking, as a FIFO's open would wait for a writer: a pipe is read as its writer
    /// writes, and a FIFO nobody writes to is refused after `pipeWait`.
    package static func readBytes(_ path: String, atMost limit: Int = readLimit) throws -> [UInt8]? {
        let opened = valueOrErrno("open", path: path) { open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) }
        if case .failure(let error) = opened, error.errno == ENOENT || error.errno == ENOTDIR { return nil }
        let fd = try opened.get()
        defer { close(fd) }
        var info = stat()
        let isPipe = fstat(fd, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            // A FIFO with no writer yet would read as empty at once: it is refused after a wait instead.
            if isPipe && !waitForDataOrEnd(fd, seconds: pipeWait) { throw NotARegularFile.noWriter(path: path, seconds: pipeWait) }
            let chunkRead = valueOrErrno("read", path: path) { chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) } }
            if case .failure(let error) = chunkRead, isPipe && error.errno == EAGAIN { continue }
            let count = try chunkRead.get()
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
            // A character device may never end (/dev/zero as a path).
            if bytes.count > limit {
                let regular = info.st_mode & S_IFMT == S_IFREG
                throw NotARegularFile.tooLarge(path: path, size: regular ? Int(info.st_size) : nil, limit: limit)
            }
        }
    }

    /// What `readBytes` reads at most: every file it is given (the configuration, the boot id, a
    /// sysfs attribute) is far smaller.
    package static let readLimit = 1 << 20

    /// How long `readBytes` waits for a pipe's writer to write or close.
    static let pipeWait = 5.0

    /// Whether a pipe has data, or its writer closed, within `seconds`. A FIFO that never had a
    /// writer shows neither (no POLLHUP on Linux).
    private static func waitForDataOrEnd(_ fd: Int32, seconds: Double) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard case .success(let ready) = valueOrErrno("poll", path: "pipe", { poll(&entry, 1, Int32(seconds * 1000)) }) else { return false }
        return ready > 0 && entry.revents != 0
    }

    /// The file as UTF-8 text, or nil when it does not exist.
    package static func readText(_ path: String, atMost limit: Int = readLimit) throws -> String? {
        try readBytes(path, atMost: limit).map { String(decoding: $0, as: UTF8.self) }
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

    /// Opens a file that must be a regular one of at most `limit` bytes, or nil when it does not
    /// exist (without O_CREAT): a symlink planted at the name is not followed (O_NOFOLLOW), a FIFO
    /// or device is never waited on (O_NONBLOCK), and an oversized file is never read into memory.
    package static func openRegularFile(_ path: String, flags: Int32, mode: mode_t = 0o600, limit: Int) throws -> (descriptor: Int32, size: Int)? {
        let fd: Int32
        switch valueOrErrno("open", path: path, { open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode) }) {
        case .success(let opened): fd = opened
        case .failure(let error) where error.errno == ENOENT: return nil
        case .failure(let error) where error.errno == ELOOP: throw NotARegularFile.symbolicLink(path: path)
        case .failure(let error) where error.errno == EISDIR || error.errno == ENXIO: throw NotARegularFile.special(path: path)
        case .failure(let error): throw error
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
            let count = try valueOrErrno("read", path: path) {
                bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + offset, size - offset, off_t(offset)) }
            }.get()
            if count == 0 { break }
            offset += count
        }
        return Array(bytes[..<offset])
    }
}
