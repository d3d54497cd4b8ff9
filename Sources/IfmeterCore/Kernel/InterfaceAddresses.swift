// The one Swift file that wraps CKernel's getifaddrs half.
import CKernel
import Glibc

/// Counters from glibc's getifaddrs (`ifm_ifaddrs_dump`): 32-bit copies of
/// IFLA_STATS that wrap at 2^32. A fallback and a cross-check, never the
/// primary source. It lists links without an address too (tun, WireGuard).
package final class InterfaceAddressesLinkSource: LinkSource {
    private var buffer = ifm_link_list()

    package let counterWidth = CounterWidth.bits32

    package init() {}

    deinit { ifm_link_list_free(&buffer) }

    package func links() throws -> [LinkSample] {
        let status = ifm_ifaddrs_dump(&buffer)
        guard status == 0 else {
            throw KernelError(operation: "getifaddrs", message: String(cString: strerror(status)))
        }
        return (0..<buffer.count).map { LinkSample(buffer.links[$0]) }
    }
}
