import Glibc

/// An open file that grows by whole records: a write the disk cannot take in full (ENOSPC, EIO) is cut
/// back off, so the file never ends inside a record this process wrote. Not synced: it outlives the
/// process, and a power cut may lose its tail like any page cache.
package final class AppendFile {
    package let path: String
    private let descriptor: Int32
    package private(set) var size: Int

    /// Takes over `descriptor`, an open regular file, positioned by O_APPEND or not: every write
    /// goes to its end.
    package init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
        var status = stat()
        size = fstat(descriptor, &status) == 0 ? Int(status.st_size) : 0
    }

    deinit { close(descriptor) }

    /// Appends `bytes` whole, or leaves the file as it was and throws.
    package func append(_ bytes: [UInt8]) throws {
        do {
            try FileSystem.writeAll(descriptor, bytes, path: path, at: size)
            size += bytes.count
        } catch {
            _ = valueOrErrno("truncate", path: path) { ftruncate(descriptor, off_t(size)) }
            throw error
        }
    }

    /// Empties the file and writes `bytes` as its whole content.
    package func replaceContents(with bytes: [UInt8]) throws {
        _ = try valueOrErrno("truncate", path: path) { ftruncate(descriptor, 0) }.get()
        size = 0
        try append(bytes)
    }
}
