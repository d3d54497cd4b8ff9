// The one Swift file that wraps CKernel's netlink half (libnl-route-3).
import CKernel

extension LinkSample {
    /// Copies a C `ifm_link` into Swift values.
    init(_ link: ifm_link) {
        var copy = link
        // Names are bytes: encoded here, once, so no two kernel names meet as
        // one String above this line (see InterfaceName).
        let name = withUnsafeBytes(of: &copy.name) { InterfaceName.encode(bytes: $0.prefix { $0 != 0 }) }
        let kind = withUnsafeBytes(of: &copy.kind) { InterfaceName.encode(bytes: $0.prefix { $0 != 0 }) }
        let c = link.counters
        self.init(
            ifindex: link.ifindex, name: name, kind: kind, arpType: link.arptype,
            flags: link.flags, operState: OperState(rawValue: link.operstate) ?? .unknown,
            counters: LinkCounters(
                rxBytes: c.rx_bytes, txBytes: c.tx_bytes,
                rxPackets: c.rx_packets, txPackets: c.tx_packets,
                rxErrors: c.rx_errors, txErrors: c.tx_errors,
                rxDropped: c.rx_dropped, txDropped: c.tx_dropped))
    }
}

extension KernelError {
    static func netlink(_ operation: String, _ code: Int32) -> KernelError {
        KernelError(operation: operation, message: String(cString: ifm_netlink_error_string(code)))
    }
}

/// Link dumps over rtnetlink with 64-bit counters (IFLA_STATS64), through
/// one socket kept open for the life of the source (`ifm_netlink_dump`).
package final class NetlinkLinkSource: LinkSource {
    private let handle: OpaquePointer
    private var buffer = ifm_link_list()

    package let counterWidth = CounterWidth.bits64

    /// Opens the dump socket (`ifm_netlink_open`).
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

    /// Dumps every link (`RTM_GETLINK` with `NLM_F_DUMP`).
    package func links() throws -> [LinkSample] {
        let status = ifm_netlink_dump(handle, &buffer)
        guard status == 0 else { throw KernelError.netlink("dumping links", status) }
        return (0..<buffer.count).map { LinkSample(buffer.links[$0]) }
    }
}

/// A non-blocking subscription to RTNLGRP_LINK (`ifm_events_open`), read on
/// the daemon's own loop when its descriptor is readable.
package final class LinkEventSocket {
    private let handle: OpaquePointer
    private var buffer = ifm_event_list()

    /// The descriptor to watch for readability.
    package var fileDescriptor: Int32 { ifm_events_fd(handle) }

    /// Subscribes with a kernel receive buffer of `receiveBufferBytes`
    /// (0 keeps the system default; a small one makes overruns likely).
    package init(receiveBufferBytes: Int = 4 << 20) throws {
        var error: Int32 = 0
        guard let handle = ifm_events_open(Int32(clamping: receiveBufferBytes), &error) else {
            throw KernelError.netlink("subscribing to link events", error)
        }
        self.handle = handle
    }

    deinit {
        ifm_events_close(handle)
        ifm_event_list_free(&buffer)
    }

    /// Every event pending now, in arrival order, and whether the kernel
    /// dropped some because the receive buffer overran (`ifm_events_read`).
    package func read() throws -> (events: [LinkEvent], overrun: Bool) {
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
        return (events, overrun != 0)
    }
}
