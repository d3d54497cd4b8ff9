import Glibc

extension FileSystem {
    /// Whether this process may not read path because of its permissions.
    package static func isReadDenied(_ path: String) -> Bool {
        guard case .failure(let error) = valueOrErrno("access", path: path, { access(path, R_OK) }) else { return false }
        return error.errno == EACCES
    }

    /// Whether root owns path.
    package static func isOwnedByRoot(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_uid == 0
    }

    /// Root takes the user and group of path's owner, with no other group; anyone else, or for a
    /// path root owns, nothing changes. What a process then creates beside path is its owner's.
    package static func becomeOwner(of path: String) throws(SystemError) {
        var info = stat()
        guard geteuid() == 0, stat(path, &info) == 0, info.st_uid != 0 else { return }
        // As root, setgid and setuid set the real, effective and saved ids.
        let becoming = "take its owner's user \(info.st_uid)"
        _ = try valueOrErrno(becoming, path: path) { setgroups(0, nil) }.get()
        _ = try valueOrErrno(becoming, path: path) { setgid(info.st_gid) }.get()
        _ = try valueOrErrno(becoming, path: path) { setuid(info.st_uid) }.get()
    }
}
