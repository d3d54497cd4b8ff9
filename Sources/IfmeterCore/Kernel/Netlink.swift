// The one Swift file that wraps CKernel's netlink half (libnl-route-3).
import CKernel

extension LinkSample {
    init(_ link: ifm_link) {
        var copy = link
        // Names are bytes, encoded here once so no two kernel names meet as one String (InterfaceName).
        let name = withUnsafeBytes(of: &copy.name) { InterfaceName.encode(bytes: $0.prefix { $0 != 0 }) }
        let kind = withUnsafeBytes(of: &copy.kind) { InterfaceName.encode(bytes: $0.prefix { $0 != 0 }) }
        self.init(
            ifindex: link.ifindex, name: name, kind: kind, arpType: link.arptype,
            flags: link.flags, operState: OperState(rawValue: link.operstate) ?? .unknown,
            counters: LinkCounters(link.counters))
    }
}

extension KernelError {
    static func netlink(_ operation: String, _ code: Int32) -> KernelError {
        KernelError(operation: operation, code: code, message: String(cString: ifm_netlink_error_string(code)))
    }
}

/// Every link's 64-bit counters: a statistics dump (`RTM_GETSTATS`, `IFLA_STATS_LINK_64` only: small)
/// joined to what the last full dump (`RTM_GETLINK`) and events since (`note`) said of each link. A full
/// dump answers first, after lost events, an unknown ifindex, a counter gone back (reset, reused ifindex).
package final class NetlinkLinkSource: LinkSource {
    enum Pass: Equatable { case full, statistics }

    private let handle: OpaquePointer
    private var buffer = ifm_link_list()
    /// Every link as last seen, counters included, by ifindex.
    private var known = IfindexTable<LinkSample>()
    private var needsFullDump = true
    /// Which dump answered the last `links()` (tests).
    private(set) var lastPass = Pass.full
    /// Dumps run again because the kernel flagged them interrupted (tests).
    var interruptedDumps: Int { Int(ifm_netlink_interrupted_dumps(handle)) }


    /// Opens the dump socket.
    package init() throws {
        var error: Int32 = 0
        guard let handle = ifm_netlink_open(&error) else {
            throw KernelError.netlink("opening a netlink route socket", error)
        }
        self.handle = handle
    }

    deinit {
        ifm_netlink_close(handle)
        ifm_link_list_free(&buffer)
    }

    /// Every link now: from the statistics dump when it names only known links, else a full dump.
    package func links() throws -> [LinkSample] {
        // A failed statistics dump (none before Linux 4.7) is answered by the full dump, whose error is reported.
        if !needsFullDump, let samples = statisticsPass() { return samples }
        return try fullPass()
    }

    package func note(events: [LinkEvent], overrun: Bool) {
        if overrun { needsFullDump = true }
        for event in events {
            switch event.kind {
            case .new: known[event.link.ifindex] = event.link
            case .deleted: known[event.link.ifindex] = nil
            }
        }
    }

    /// Dumps every link (`RTM_GETLINK` with `NLM_F_DUMP`).
    private func fullPass() throws -> [LinkSample] {
        let status = ifm_netlink_dump(handle, &buffer)
        guard status == 0 else { throw KernelError.netlink("dumping links", status) }
        let samples = (0..<buffer.count).map { LinkSample(buffer.links[$0]) }
        // A dump lists each ifindex once (one the kernel flags interrupted is run again or fails).
        known = IfindexTable(firstOf: samples.map { ($0.ifindex, $0) })
        needsFullDump = false
        lastPass = .full
        return samples
    }

    /// The counters of every link (`RTM_GETSTATS`) joined to what is known of each; nil when the full
    /// dump must answer instead.
    private func statisticsPass() -> [LinkSample]? {
        guard ifm_netlink_stats(handle, &buffer) == 0 else { return nil }
        var samples: [LinkSample] = []
        samples.reserveCapacity(buffer.count)
        var cursor = IfindexTable<LinkSample>.Cursor()
        for index in 0..<buffer.count {
            let entry = buffer.links[index]
            // One lookup, the counters updated in place.
            guard let slot = known.slot(of: entry.ifindex, from: &cursor) else { return nil }
            let counters = LinkCounters(entry.counters)
            guard !counters.wentBack(from: known[slot: slot].counters) else { return nil }
            known[slot: slot].counters = counters
            samples.append(known[slot: slot])
        }
        // A link missing here is gone, as it would be from a full dump.
        if samples.count != known.count {
            known = IfindexTable(firstOf: samples.map { ($0.ifindex, $0) })
        }
        lastPass = .statistics
        return samples
    }
}

extension LinkCounters {
    init(_ c: ifm_counters) {
        self.init(
            rxBytes: c.rx_bytes, txBytes: c.tx_bytes,
            rxPackets: c.rx_packets, txPackets: c.tx_packets,
            rxErrors: c.rx_errors, txErrors: c.tx_errors,
            rxDropped: c.rx_dropped, txDropped: c.tx_dropped)
    }

    /// Whether any counter is below `earlier`'s.
    func wentBack(from earlier: LinkCounters) -> Bool {
        rxBytes < earlier.rxBytes || txBytes < earlier.txBytes || rxPackets < earlier.rxPackets
            || txPackets < earlier.txPackets || rxErrors < earlier.rxErrors || txErrors < earlier.txErrors
            || rxDropped < earlier.rxDropped || txDropped < earlier.txDropped
    }
}

/// A non-blocking subscription to RTNLGRP_LINK, read on the daemon's loop when readable.
package final class LinkEventSocket {
    private let handle: OpaquePointer
    private var buffer = ifm_event_list()

    package var fileDescriptor: Int32 { ifm_events_fd(handle) }

    /// The receive buffer the kernel granted (bytes, as requested), if known.
    package var receiveBufferBytes: Int? {
        let bytes = ifm_events_receive_buffer(handle)
        return bytes < 0 ? nil : Int(bytes)
    }

    /// The socket's identity within a boot (its cookie, never reused), 0 if unknown.
    package var identity: UInt64 { ifm_events_identity(handle) }

    /// The kernel's count of messages the socket dropped, as the last read saw it; a socket taken
    /// over starts from 0 (every drop since it opened is news) unless told what its last reader saw.
    package var seenDrops: UInt32 {
        get { ifm_events_seen_drops(handle) }
        set { ifm_events_set_seen_drops(handle, newValue) }
    }

    /// Subscribes with a kernel receive buffer of `receiveBufferBytes` (0: the system default).
    package init(receiveBufferBytes: Int = 4 << 20) throws {
        var error: Int32 = 0
        guard let handle = ifm_events_open(Int32(clamping: receiveBufferBytes), &error) else {
            throw KernelError.netlink("subscribing to link events", error)
        }
        self.handle = handle
    }

    /// Takes `descriptor`, an event socket kept by the service manager while the daemon restarted, if it
    /// is a route socket of this namespace; closes it otherwise.
    package init(adopting descriptor: Int32, receiveBufferBytes: Int) throws {
        var error: Int32 = 0
        guard let handle = ifm_events_adopt(descriptor, Int32(clamping: receiveBufferBytes), &error) else {
            throw KernelError.netlink("taking the link event socket kept by the service manager", error)
        }
        self.handle = handle
    }

    deinit {
        ifm_events_close(handle)
        ifm_event_list_free(&buffer)
    }

    /// Every event pending now in arrival order, whether the receive buffer overran, and whether the
    /// read stopped at its bound (`IFM_EVENTS_PER_READ`) with more maybe queued.
    package func read() throws -> (events: [LinkEvent], overrun: Bool, morePending: Bool) {
        buffer.count = 0
        var overrun: Int32 = 0
        let status = ifm_events_read(handle, &buffer, &overrun)
        guard status == 0 else { throw KernelError.netlink("reading link events", status) }
        let events = (0..<buffer.count).map { index -> LinkEvent in
            let event = buffer.events[index]
            let kind: LinkEvent.Kind =
                event.type == Int32(IFM_LINK_DEL) ? .deleted(movedToOtherNamespace: event.moved != 0) : .new
            return LinkEvent(kind: kind, link: LinkSample(event.link))
        }
        return (events, overrun != 0, buffer.count >= Int(IFM_EVENTS_PER_READ))
    }
}
