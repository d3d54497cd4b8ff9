import Glibc
@testable import IfmeterCore

/// A UDP socket for exact test traffic; opened inside a namespace, it stays there.
final class UDPSocket {
    let fd: Int32

    init(bindTo address: String?, port: UInt16) throws {
        fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw SystemError("socket", path: "udp", errno: errno) }
        if let address {
            var local = try Self.socketAddress(address, port: port)
            let status = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard status == 0 else { throw SystemError("bind", path: address, errno: errno) }
        }
    }

    deinit { close(fd) }

    static func socketAddress(_ address: String, port: UInt16) throws -> sockaddr_in {
        var result = sockaddr_in()
        result.sin_family = sa_family_t(AF_INET)
        result.sin_port = port.bigEndian
        guard inet_pton(AF_INET, address, &result.sin_addr) == 1 else { throw SystemError("inet_pton", path: address, errno: EINVAL) }
        return result
    }

    /// Sends one datagram of `bytes` payload bytes (IP length bytes + 28).
    func send(bytes: Int, to address: String, port: UInt16) throws {
        var destination = try Self.socketAddress(address, port: port)
        let payload = [UInt8](repeating: 0x42, count: bytes)
        let sent = withUnsafePointer(to: &destination) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(fd, payload, payload.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard sent == bytes else { throw SystemError("sendto", path: address, errno: errno) }
    }

    /// Waits up to two seconds for one datagram; returns its payload length.
    func receive() throws -> Int {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, 2000) == 1 else { throw SystemError("poll", path: "udp", errno: ETIMEDOUT) }
        var buffer = [UInt8](repeating: 0, count: 65536)
        return recv(fd, &buffer, buffer.count, 0)
    }
}
