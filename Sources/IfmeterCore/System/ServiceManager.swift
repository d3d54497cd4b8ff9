import CKernel
import Glibc

/// The systemd notification protocol (sd_notify(3)), spoken directly
/// (`ifm_notify`): one datagram per call to `$NOTIFY_SOCKET`. Without it
/// (not started by systemd with Type=notify) every call does nothing.
package enum ServiceManager {
    /// Sends newline-separated `KEY=value` assignments.
    package static func notify(_ assignments: String) {
        guard let address = environment("NOTIFY_SOCKET"), !assignments.isEmpty else { return }
        _ = ifm_notify(address, assignments, assignments.utf8.count)
    }

    /// The interval at which systemd expects WATCHDOG=1, when WatchdogSec=
    /// is set for this process (what `sd_watchdog_enabled` answers).
    package static var watchdogInterval: Double? {
        watchdogInterval(usec: environment("WATCHDOG_USEC"), pid: environment("WATCHDOG_PID"), ownPID: getpid())
    }

    /// `WATCHDOG_USEC` as seconds, unless `WATCHDOG_PID` names another
    /// process (the variables were inherited by a child, not meant for it).
    static func watchdogInterval(usec: String?, pid: String?, ownPID: pid_t) -> Double? {
        guard let usec, let microseconds = UInt64(usec), microseconds > 0 else { return nil }
        if let pid {
            guard let target = pid_t(pid), target == ownPID else { return nil }
        }
        return Double(microseconds) / 1_000_000
    }

    private static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        return String(cString: value)
    }
}
