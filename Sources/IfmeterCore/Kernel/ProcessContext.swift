import CKernel
import Glibc

/// Which network namespace a process counts in: the daemon records it with every life, and the CLI
/// compares its own with the daemon's before mixing the kernel's links into a live figure.
package enum NamespaceIdentity {
    /// The cookie of the namespace `socket` lives in; 0 when the kernel cannot tell (before Linux 5.14).
    package static func cookie(ofSocket socket: Int32) -> NamespaceCookie {
        var cookie: UInt64 = 0
        return ifm_netns_cookie(socket, &cookie) == 0 ? cookie : 0
    }

    /// The cookie of the caller's own namespace.
    package static func current() -> NamespaceCookie {
        let probe = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard probe >= 0 else { return 0 }
        defer { close(probe) }
        return cookie(ofSocket: probe)
    }
}

/// What the system says of its wall clock (`ClockTrust.Reading`): the kernel's synchronised flag or
/// timesyncd's, and whether a time service runs that will set it. Tests name their own timesyncd
/// directory (`IFMETER_TEST_TIMESYNC_DIR`), and the kernel's flag is then not asked.
package struct ClockStatus: Sendable {
    let timesyncDirectory: String
    let asksTheKernel: Bool

    package init(environment: [String: String]) {
        timesyncDirectory = environment["IFMETER_TEST_TIMESYNC_DIR"] ?? "/run/systemd/timesync"
        asksTheKernel = environment["IFMETER_TEST_TIMESYNC_DIR"] == nil
    }

    package func reading(_ now: Instant) -> ClockTrust.Reading {
        let synchronized = (asksTheKernel && ifm_clock_is_synchronized() == 1) || FileSystem.exists(timesyncDirectory + "/synchronized")
        let expected = FileSystem.isDirectory(timesyncDirectory)
            || (asksTheKernel && (FileSystem.isDirectory("/run/chrony") || FileSystem.exists("/run/ntpd.pid")))
        return ClockTrust.Reading(wall: Double(now.wall), boottime: now.sinceBoot, synchronized: synchronized, syncExpected: expected)
    }
}

/// How late the kernel may wake this process: a sample a fraction of a second late costs nothing and
/// shares a CPU wake with other timers.
package enum TimerSlack {
    package static func set(seconds: Double) {
        _ = ifm_set_timer_slack(UInt64(max(seconds, 0) * 1e9))
    }
}

/// How the C heap hands memory back: up to 1 MiB stays free at its top instead of glibc's 128 KiB, so
/// a burst of link events does not give pages back only to fault them in again a second later
/// (bench/TRIES.md); it also keeps glibc from raising its mmap threshold after the first large free.
package enum HeapTuning {
    package static func keepFreedMemory() {
        _ = ifm_set_heap_trim_threshold(1 << 20)
    }
}
