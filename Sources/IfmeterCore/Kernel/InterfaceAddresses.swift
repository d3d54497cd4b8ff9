// The one Swift file that wraps CKernel's getifaddrs half.
import CKernel
import Glibc

/// Every link as glibc's getifaddrs lists it (`ifm_ifaddrs_dump`), addressless ones too (tun, WireGuard);
/// its counters, 32-bit copies of IFLA_STATS that wrap at 2^32, are a cross-check, never a source.
package enum InterfaceAddresses {
    package static func links() throws -> [LinkSample] {
        var buffer = ifm_link_list()
        defer { ifm_link_list_free(&buffer) }
        let status = ifm_ifaddrs_dump(&buffer)
        guard status == 0 else {
            throw KernelError(operation: "getifaddrs", code: status, message: String(cString: strerror(status)))
        }
        return (0..<buffer.count).map { LinkSample(buffer.links[$0]) }
    }
}
