import Glibc

extension FileSystem {
    /// Waits until fd is readable or `seconds` pass; true when readable.
    package static func waitReadable(_ fd: Int32, seconds: Double) -> Bool {
        // Not through `valueOrErrno`: a wait a signal interrupts ends early (false), not anew.
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let result = poll(&entry, 1, Int32(seconds * 1000))
        return result > 0 && entry.revents & Int16(POLLIN) != 0
    }
}
