import CKernel
import Glibc

/// Which network namespace a process counts in (`ifm_netns_cookie`). The
/// daemon records it with every life; the CLI compares its own with the
/// daemon's before mixing the kernel's links into a live figure.
package enum NamespaceIdentity {
    /// The cookie of the namespace `socket` lives in; 0 when the kernel
    /// cannot tell (before Linux 5.14).
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

/// How late the kernel may wake this process (`ifm_set_timer_slack`): a
/// sample a fraction of a second late costs nothing, and lets the wakeup
/// share a CPU wake with other timers on an idle laptop.
package enum TimerSlack {
    package static func set(seconds: Double) {
        _ = ifm_set_timer_slack(UInt64(max(seconds, 0) * 1e9))
    }
}
