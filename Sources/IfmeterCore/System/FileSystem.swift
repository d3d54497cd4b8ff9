// FileSystem*.swift and AppendFile.swift wrap libc's file I/O through `valueOrErrno` (SystemError.swift):
// above them are Strings and byte arrays; unsafe buffers stay here.
import Glibc

/// Minimal file access on libc, kept out of Foundation so the daemon stays small.
package enum FileSystem {
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

    /// Whether path is a directory (following symlinks).
    package static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// Whether path is a regular file this process may execute (following symlinks).
    package static func isExecutableFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG && access(path, X_OK) == 0
    }

    package static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }

    /// What can stand at a path that is neither a regular file nor a symbolic link.
    package enum NonFile: String, CustomStringConvertible {
        case directory = "a directory"
        case device = "a device"
        case fifo = "a FIFO"
        case socket = "a socket"
        package var description: String { rawValue }
    }

    /// What stands at path when neither a regular file nor a symlink (nil when it is, or nothing is there);
    /// `followingSymbolicLinks`: what a link leads to (nil if dangling). Never opens path: no FIFO wait.
    package static func nonFileKind(_ path: String, followingSymbolicLinks: Bool = false) -> NonFile? {
        var info = stat()
        guard (followingSymbolicLinks ? stat(path, &info) : lstat(path, &info)) == 0 else { return nil }
        return nonFileKind(mode: info.st_mode)
    }

    /// What a file of stat's `mode` is, when neither a regular file nor a symbolic link.
    static func nonFileKind(mode: mode_t) -> NonFile? {
        switch mode & S_IFMT {
        case S_IFREG, S_IFLNK: return nil
        case S_IFDIR: return .directory
        case S_IFIFO: return .fifo
        case S_IFSOCK: return .socket
        default: return .device
        }
    }

    /// The target a symbolic link names, or nil when path is not one or cannot be read.
    package static func symbolicLinkTarget(_ path: String) -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBufferPointer { $0.withMemoryRebound(to: CChar.self) { readlink(path, $0.baseAddress!, $0.count) } }
        guard count > 0, count < buffer.count else { return nil }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }

    /// The absolute path, every symbolic link, `.` and `..` resolved; nil when some part does not exist.
    package static func resolvedPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The kernel's tree (/dev, /proc, /sys) holding `directory` once resolved: a write there lands in a
    /// device or a kernel attribute (/sys/class/net/LINK/ifalias). /dev/shm, anyone's tmpfs, is none.
    package static func kernelTree(holding directory: String) -> String? {
        kernelTree(ofResolved: resolvedPath(directory) ?? directory)
    }

    /// The same for the directory `descriptor` holds open, which the path it was opened by may no
    /// longer name (a directory swapped for a symbolic link into /sys while the daemon runs).
    static func kernelTree(ofDirectoryDescriptor descriptor: Int32) -> String? {
        symbolicLinkTarget("/proc/self/fd/\(descriptor)").flatMap(kernelTree(ofResolved:))
    }

    private static func kernelTree(ofResolved directory: String) -> String? {
        func isIn(_ root: String) -> Bool { directory == root || directory.hasPrefix(root + "/") }
        if isIn("/dev/shm") { return nil }
        return ["/dev", "/proc", "/sys"].first(where: isIn)
    }

    /// Whether two paths name one file: the same text, or (both existing) the same device and inode
    /// whatever symlinks or `..` lead there. Files not made yet match by name, in the same directory.
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

    /// The part of path after its last slash.
    package static func baseName(_ path: String) -> String {
        path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
    }

    /// The working directory, or nil when it cannot be named (removed).
    package static func currentDirectory() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return nil }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    package static func executablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
