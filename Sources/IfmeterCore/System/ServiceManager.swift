// The one Swift file that wraps libsystemd (sd_notify and the watchdog).
import CSystemd

/// The systemd notification protocol. Without `$NOTIFY_SOCKET` (not
/// started by systemd with Type=notify) every call does nothing.
package enum ServiceManager {
    /// Sends newline-separated `KEY=value` assignments (`sd_notify`).
    package static func notify(_ assignments: String) {
        _ = sd_notify(0, assignments)
    }

    /// The interval at which systemd expects WATCHDOG=1, when WatchdogSec=
    /// is set for this process (`sd_watchdog_enabled`).
    package static var watchdogInterval: Double? {
        var microseconds: UInt64 = 0
        guard sd_watchdog_enabled(0, &microseconds) > 0, microseconds > 0 else { return nil }
        return Double(microseconds) / 1_000_000
    }
}
