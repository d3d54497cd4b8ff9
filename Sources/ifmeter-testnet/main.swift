// Run in a test's namespace (`ip netns exec NS ifmeter-testnet ...`): moves a tun's counters by exact bytes
// (KERNEL.md). RX: UDP into the fd, to a bound port (else the ICMP port-unreachable is TX too); TX: datagrams
// routed into the tun, read back so none drops. IPv6 off before link up; addresses in 198.18.0.0/15 (RFC 2544).
import CTestTun
@preconcurrency import Glibc

func fail(_ message: String, status: Int32 = 1) -> Never {
    fputs("ifmeter-testnet: \(message)\n", stderr)
    exit(status)
}

/// A mistake in the command line: EX_USAGE.
func usageFailure(_ message: String) -> Never { fail("\(message) (see ifmeter-testnet --help)", status: 64) }

let usage = """
    Usage: ifmeter-testnet --name NAME [--subnet N] [--rx-packets N] [--tx-packets N] [--size BYTES]
                           [--persist] [--lives N] [--hold-ms MS] [--until-stdin-closed] [--down-drops N]
           ifmeter-testnet --name NAME --await-operstate STATE

    The tests' traffic tool, run inside a test's network namespace (ip netns exec NS ...).
    Creates the tun NAME (198.18.N.1/24), moves its counters by exact packets of BYTES
    (28-1400, IP length) each way, and deletes it unless --persist; --lives repeats that.
    Run on the host it changes the host's links: it is meant for a private namespace.

    """

func run(_ command: String) {
    if system(command) != 0 { fail("command failed: \(command)") }
}

struct Options {
    var name = ""
    var subnet = 0
    var rxPackets = 0
    var txPackets = 0
    var size = 100
    var persist = false
    var lives = 1
    var holdMilliseconds = 0
    var untilStdinClosed = false
    /// Packets written while the device is down: each fails with EIO and counts one rx_dropped, no link event.
    var downDrops = 0
    /// Only wait for the link watcher to settle `name` at this operstate.
    var awaitOperstate: String?
}

func parse(_ words: [String]) -> Options {
    var options = Options()
    var index = 0
    func value() -> String {
        index += 1
        guard index < words.count else { usageFailure("\(words[index - 1]) needs a value") }
        return words[index]
    }
    func number() -> Int {
        guard let parsed = Int(value()) else { usageFailure("\(words[index - 1]) needs a number") }
        return parsed
    }
    while index < words.count {
        switch words[index] {
        case "--name": options.name = value()
        case "--subnet": options.subnet = number()
        case "--rx-packets": options.rxPackets = number()
        case "--tx-packets": options.txPackets = number()
        case "--size": options.size = number()
        case "--persist": options.persist = true
        case "--lives": options.lives = number()
        case "--hold-ms": options.holdMilliseconds = number()
        case "--until-stdin-closed": options.untilStdinClosed = true
        case "--down-drops": options.downDrops = number()
        case "--await-operstate": options.awaitOperstate = value()
        case "--help", "-h":
            fputs(usage, stdout)
            exit(0)
        default: usageFailure("unknown option \(words[index])")
        }
        index += 1
    }
    guard !options.name.isEmpty else { usageFailure("--name NAME is required: the tun it creates") }
    guard (28...1400).contains(options.size) else { usageFailure("--size must be 28...1400 (an IPv4/UDP packet)") }
    guard (0...255).contains(options.subnet) else { usageFailure("--subnet must be 0...255") }
    return options
}

func address(_ subnet: Int, _ host: UInt8) -> in_addr {
    in_addr(s_addr: UInt32(198 | 18 << 8 | subnet << 16 | Int(host) << 24))
}

func socketAddress(_ address: in_addr, port: UInt16) -> sockaddr_in {
    var socketAddress = sockaddr_in()
    socketAddress.sin_family = sa_family_t(AF_INET)
    socketAddress.sin_port = port.bigEndian
    socketAddress.sin_addr = address
    return socketAddress
}

func udpSocket(boundTo address: in_addr?, port: UInt16) -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
    guard fd >= 0 else { fail("socket: \(errno)") }
    if let address {
        var local = socketAddress(address, port: port)
        let status = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard status == 0 else { fail("bind: \(errno)") }
    }
    return fd
}

/// An IPv4/UDP packet of exactly `size` bytes, checksummed header, UDP checksum off.
func ipv4Packet(size: Int, from source: in_addr, to destination: in_addr, port: UInt16) -> [UInt8] {
    var packet = [UInt8](repeating: 0x5a, count: size)
    let header: [UInt8] = [
        0x45, 0, UInt8(size >> 8), UInt8(size & 0xff), 0, 0, 0x40, 0, 64, 17, 0, 0,
    ]
    packet.replaceSubrange(0..<12, with: header)
    withUnsafeBytes(of: source.s_addr) { packet.replaceSubrange(12..<16, with: $0) }
    withUnsafeBytes(of: destination.s_addr) { packet.replaceSubrange(16..<20, with: $0) }
    var sum: UInt32 = 0
    for index in stride(from: 0, to: 20, by: 2) { sum += UInt32(packet[index]) << 8 | UInt32(packet[index + 1]) }
    while sum > 0xffff { sum = (sum & 0xffff) + (sum >> 16) }
    let checksum = ~UInt16(sum)
    packet[10] = UInt8(checksum >> 8)
    packet[11] = UInt8(checksum & 0xff)
    let udpLength = size - 20
    let udp: [UInt8] = [0x9c, 0x40, UInt8(port >> 8), UInt8(port & 0xff), UInt8(udpLength >> 8), UInt8(udpLength & 0xff), 0, 0]
    packet.replaceSubrange(20..<28, with: udp)
    return packet
}

/// The first line of one of a link's sysfs attributes, nil when unreadable.
func sysfsAttribute(_ name: String, _ attribute: String) -> String? {
    guard let file = fopen("/sys/class/net/\(name)/\(attribute)", "r") else { return nil }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 32)
    guard fgets(&line, Int32(line.count), file) != nil else { return nil }
    return String(decoding: line.prefix { $0 != 0 && $0 != 0x0a }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Waits, up to a minute, until the kernel's link watcher (a work queue) has handled `name`'s carrier: until
/// then packets drop silently and a dump shows the old operstate. It sets both in one step under RTNL, so a
/// no-op RTM_NEWLINK (which takes that lock) after operstate reads `operstate` returns once the step is over.
func awaitLinkWatcher(_ name: String, operstate: String) {
    for _ in 0..<6000 {
        if sysfsAttribute(name, "operstate") == operstate {
            run("ip link set dev \(name) up")
            return
        }
        usleep(10_000)
    }
    fail("\(name): operstate \(sysfsAttribute(name, "operstate") ?? "unreadable"), not \(operstate), after a minute")
}

func live(_ options: Options) {
    let fd = ifm_test_tun_open(options.name, 0, options.persist ? 1 : 0)
    guard fd >= 0 else { fail("opening tun \(options.name): \(String(cString: strerror(-fd)))") }
    if options.downDrops > 0 {
        let packet = ipv4Packet(size: options.size, from: address(options.subnet, 2), to: address(options.subnet, 1), port: 9)
        for _ in 0..<options.downDrops {
            let written = packet.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard written < 0, errno == EIO else { fail("a write to the down tun did not fail with EIO") }
        }
        close(fd)
        return
    }
    let local = address(options.subnet, 1)
    let peer = address(options.subnet, 2)
    let port = UInt16(9000 + options.subnet)
    // IPv6 off before the link goes up, or router solicitations and MLD reports add bytes nobody asked for.
    let sysctl = "/proc/sys/net/ipv6/conf/\(options.name)/disable_ipv6"
    if let file = fopen(sysctl, "w") {
        fputs("1", file)
        fclose(file)
    }
    let wasUp = sysfsAttribute(options.name, "flags").flatMap { UInt32($0.dropFirst(2), radix: 16) }.map { $0 & UInt32(IFF_UP) != 0 } ?? false
    run("ip addr replace 198.18.\(options.subnet).1 peer 198.18.\(options.subnet).2 dev \(options.name) && ip link set \(options.name) up")
    // A persistent tun already up got its carrier back when this process attached, and its queueing
    // discipline comes only when the link watcher handles that, dropping datagrams until then; bringing a
    // link up swaps the discipline in at once, so only this case waits.
    if wasUp && options.txPackets > 0 { awaitLinkWatcher(options.name, operstate: "up") }
    let receiver = udpSocket(boundTo: local, port: port)
    let rxPacket = ipv4Packet(size: options.size, from: peer, to: local, port: port)
    for _ in 0..<options.rxPackets {
        let written = rxPacket.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == options.size else { fail("write to tun: \(errno)") }
    }
    let sender = udpSocket(boundTo: nil, port: 0)
    var destination = socketAddress(peer, port: port)
    let payload = [UInt8](repeating: 0xa5, count: options.size - 28)
    var readBack = [UInt8](repeating: 0, count: 2048)
    for _ in 0..<options.txPackets {
        let sent = withUnsafePointer(to: &destination) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(sender, payload, payload.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard sent == payload.count else { fail("sendto: \(errno)") }
        // Read it back out of the tun: once read, it was counted as TX.
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, 2000) == 1 else { fail("the datagram did not reach the tun") }
        let count = read(fd, &readBack, readBack.count)
        guard count == options.size else { fail("read \(count) bytes back from the tun, expected \(options.size)") }
    }
    if options.holdMilliseconds > 0 { usleep(UInt32(options.holdMilliseconds) * 1000) }
    if options.untilStdinClosed {
        var byte: UInt8 = 0
        while read(0, &byte, 1) > 0 {}
    }
    close(sender)
    close(receiver)
    close(fd)
}

setvbuf(stdout, nil, _IOLBF, 0)
let options = parse(Array(CommandLine.arguments.dropFirst()))
if let operstate = options.awaitOperstate {
    awaitLinkWatcher(options.name, operstate: operstate)
} else {
    for _ in 0..<options.lives { live(options) }
    // Said to a person at a terminal; the tests, which run it thousands of times, read nothing.
    if isatty(1) != 0 {
        let lives = options.lives == 1 ? "1 life" : "\(options.lives) lives"
        print("\(options.name): \(lives), each \(options.rxPackets) packets received and \(options.txPackets) sent of \(options.size) bytes; "
              + (options.persist ? "kept (--persist)" : "deleted"))
    }
}
