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

/// How the C heap hands memory back to the kernel (`ifm_set_heap_trim_threshold`).
///
/// Under link churn every burst of events grows the heap by a few hundred
/// KiB (libnl's 64 KiB receive buffer a read, SQLite's statement memory,
/// the burst's arrays), and glibc, once more than 128 KiB is free at the
/// top, gives it back at the end of the burst, only to fault the same pages
/// in again a second later: brk, munmap and page faults were about a tenth
/// of the daemon's CPU under `make bench`'s churn. Keeping up to 1 MiB free
/// instead (two daemons side by side under that churn, 90 s rounds,
/// medians): 0.81x and 0.85x the CPU set through GLIBC_TUNABLES (five
/// rounds each), 0.92x set here (four rounds, two of them beside a test
/// run); peak RSS 9.0-9.3 MiB with it, 9.0-9.1 without (three pairs). An
/// earlier try at 4 MiB measured 0.94x and 0.99x (bench/TRIES.md). An idle
/// daemon's heap does not move, so its memory is unchanged.
/// Setting it also stops glibc from raising its mmap threshold (128 KiB)
/// after the first large free: the per-sample arrays of thousands of links
/// are then mapped afresh each sample, which measured no different at
/// 4,000 links (1.48 against 1.48 µs a link). So is a netlink receive
/// buffer grown past 128 KiB after a link too large to read (hundreds of
/// long altnames): a few page faults a read, only on such a machine.
package enum HeapTuning {
    package static func keepFreedMemory() {
        _ = ifm_set_heap_trim_threshold(1 << 20)
    }
}
