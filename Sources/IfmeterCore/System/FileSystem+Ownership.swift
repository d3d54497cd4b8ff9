import Glibc

extension FileSystem {
    /// Whether this process may not read path because of its permissions.
    package static func isReadDenied(_ path: String) -> Bool {
        guard case .failure(let error) = valueOrErrno("access", path: path, { access(path, R_OK) }) else { return false }
        return error.errno == EACCES
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

    /// Whether the account database puts this user in path's group while this process does not carry
    /// it: `usermod -aG` applies from the next login, so the user is to log in again, not to ask to
    /// be added.
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
}
