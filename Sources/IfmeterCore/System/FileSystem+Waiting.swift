// Part of FileSystem (FileSystem.swift): waiting on a descriptor or for a time.
import Glibc

extension FileSystem {
    /// Waits until fd is readable or `seconds` pass; true when readable.
    ///
    /// The corresponding C function is `poll`.
    package static func waitReadable(_ fd: Int32, seconds: Double) -> Bool {
        // Not through `valueOrErrno`: a wait a signal interrupts ends early (false), not anew.
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let result = poll(&entry, 1, Int32(seconds * 1000))
        return result > 0 && entry.revents & Int16(POLLIN) != 0
    }

    /// Sleeps, resuming after signals that do not end the process.
    ///
    /// The corresponding C function is `nanosleep`.
    package static func sleep(seconds: Double) {
        // Its own loop, not `valueOrErrno`: after EINTR it sleeps for the time remaining, not anew.
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }
}
