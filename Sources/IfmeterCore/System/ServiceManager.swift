import CKernel
import Glibc

/// The systemd notification protocol (sd_notify(3)) spoken directly: one datagram per call to
/// `$NOTIFY_SOCKET`; without it every call does nothing.
package enum ServiceManager {
    /// Sends newline-separated `KEY=value` assignments.
    package static func notify(_ assignments: String) {
        guard let address = environment("NOTIFY_SOCKET"), !assignments.isEmpty else { return }
        _ = ifm_notify(address, assignments, assignments.utf8.count)
    }

    /// The interval at which systemd expects WATCHDOG=1 (what `sd_watchdog_enabled` answers).
    package static var watchdogInterval: Double? {
        watchdogInterval(usec: environment("WATCHDOG_USEC"), pid: environment("WATCHDOG_PID"), ownPID: getpid())
    }

    /// Nil when `WATCHDOG_PID` names another process: the variables were inherited, not meant for it.
    static func watchdogInterval(usec: String?, pid: String?, ownPID: pid_t) -> Double? {
        guard let usec, let microseconds = UInt64(usec), microseconds > 0 else { return nil }
        if let pid {
            guard let target = pid_t(pid), target == ownPID else { return nil }
        }
        return Double(microseconds) / 1_000_000
    }

    // MARK: Descriptors passed by the socket unit

    package struct PassedDescriptor: Equatable, Sendable {
        package var name: String
        package var descriptor: Int32
    }

    /// The descriptors passed to this process (sd_listen_fds(3)), once: the variables are cleared as read.
    package static func takePassedDescriptors() -> [PassedDescriptor] {
        let passed = passedDescriptors(
            count: environment("LISTEN_FDS"), pid: environment("LISTEN_PID"), names: environment("LISTEN_FDNAMES"), ownPID: getpid())
        for name in ["LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES"] { unsetenv(name) }
        return passed
    }

    /// `LISTEN_FDS` descriptors from 3 on, named by `LISTEN_FDNAMES` ("unknown" where it names none),
    /// unless `LISTEN_PID` is missing or names another process.
    static func passedDescriptors(count: String?, pid: String?, names: String?, ownPID: pid_t) -> [PassedDescriptor] {
        guard let pid, pid_t(pid) == ownPID, let count, let number = Int32(count), number > 0, number < 1 << 16 else { return [] }
        let listed = names.map { $0.split(separator: ":", omittingEmptySubsequences: false).map(String.init) } ?? []
        return (0..<number).map { offset in
            PassedDescriptor(name: Int(offset) < listed.count ? listed[Int(offset)] : "unknown", descriptor: 3 + offset)
        }
    }

    private static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        return String(cString: value)
    }
}
