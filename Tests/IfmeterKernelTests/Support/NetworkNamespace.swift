import Foundation
import CTestTun
import Glibc
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// A private network namespace made with `ip netns add`, deleted on deinit.
/// Tests push traffic in it with `ifmeter-testnet` and read it back through
/// the real kernel: nothing here is a mock.
final class NetworkNamespace {
    private static let counter = Counter()

    let name: String

    init() throws {
        _ = NetworkNamespace.leftoversRemoved
        name = "ifmt-\(getpid())-\(NetworkNamespace.counter.next())"
        try mustRun("/usr/bin/env", ["ip", "netns", "add", name])
        try exec(["ip", "link", "set", "lo", "up"])
    }

    deinit {
        _ = try? runProcess("/usr/bin/env", ["ip", "netns", "del", name])
    }

    /// A test run that was killed never ran its deinits: its namespaces
    /// (named for its pid) would pile up on a developer's machine. Removed
    /// once, before this run makes its first.
    private static let leftoversRemoved: Void = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/run/netns")) ?? []
        for leftover in names where leftover.hasPrefix("ifmt-") {
            let fields = leftover.split(separator: "-")
            guard fields.count == 3, let pid = pid_t(fields[1]), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            _ = try? runProcess("/usr/bin/env", ["ip", "netns", "del", leftover])
        }
    }()

    /// Runs a command inside the namespace (sysfs remounted for it); must succeed.
    @discardableResult
    func exec(_ command: [String], input: String? = nil) throws -> String {
        try mustRun("/usr/bin/env", ["ip", "netns", "exec", name] + command, input: input)
    }

    /// Runs a command inside the namespace and returns however it ended.
    func run(_ command: [String]) throws -> ProcessResult {
        try runProcess("/usr/bin/env", ["ip", "netns", "exec", name] + command)
    }

    /// Creates tun lives and pushes exact traffic (see ifmeter-testnet).
    func tunTraffic(
        name device: String = "tun0", subnet: Int = 0, rxPackets: Int = 0, txPackets: Int = 0, size: Int = 100,
        persist: Bool = false, lives: Int = 1
    ) throws {
        var arguments = [
            TestEnvironment.binary("ifmeter-testnet"), "--name", device, "--subnet", String(subnet),
            "--rx-packets", String(rxPackets), "--tx-packets", String(txPackets), "--size", String(size),
            "--lives", String(lives),
        ]
        if persist { arguments.append("--persist") }
        try exec(arguments)
    }

    /// A veth pair from here (`near`, 198.18.200.1) to `far` (198.18.200.2)
    /// with IPv6 off and static neighbours, so only the datagrams sent cross
    /// it: no ARP, no router solicitations.
    func vethPair(_ near: String, to far: NetworkNamespace, _ farName: String) throws {
        try exec(["sh", "-c", """
            ip link add \(near) type veth peer name \(farName) netns \(far.name) &&
            echo 1 > /proc/sys/net/ipv6/conf/\(near)/disable_ipv6 &&
            ip addr add 198.18.200.1/30 dev \(near) && ip link set \(near) up
            """])
        try far.exec(["sh", "-c", """
            echo 1 > /proc/sys/net/ipv6/conf/\(farName)/disable_ipv6 &&
            ip addr add 198.18.200.2/30 dev \(farName) && ip link set \(farName) up
            """])
        let nearAddress = try exec(["cat", "/sys/class/net/\(near)/address"]).trimmingCharacters(in: .whitespacesAndNewlines)
        let farAddress = try far.exec(["cat", "/sys/class/net/\(farName)/address"]).trimmingCharacters(in: .whitespacesAndNewlines)
        try exec(["ip", "neigh", "replace", "198.18.200.2", "lladdr", farAddress, "dev", near, "nud", "permanent"])
        try far.exec(["ip", "neigh", "replace", "198.18.200.1", "lladdr", nearAddress, "dev", farName, "nud", "permanent"])
        // The near end went up first: it got its carrier when the far end
        // went up, and its queueing discipline only from the link watcher.
        try awaitLinkWatcher(near, operstate: "up")
    }

    /// Waits until the kernel's link watcher has settled `device` at
    /// `operstate` (ifmeter-testnet --await-operstate says why and how).
    func awaitLinkWatcher(_ device: String, operstate: String) throws {
        try exec([TestEnvironment.binary("ifmeter-testnet"), "--name", device, "--await-operstate", operstate])
    }

    /// Sends `count` UDP datagrams of IP length `size` from here to the far
    /// end of `vethPair`, received by a bound socket there.
    func sendOverVeth(to far: NetworkNamespace, count: Int, size: Int) throws {
        let receiver = try far.inside { try UDPSocket(bindTo: "198.18.200.2", port: 7000) }
        let sender = try inside { try UDPSocket(bindTo: nil, port: 0) }
        for _ in 0..<count { try sender.send(bytes: size - 28, to: "198.18.200.2", port: 7000) }
        for _ in 0..<count { _ = try receiver.receive() }
    }

    /// Calls `body` on this thread while it is inside the namespace. Sockets
    /// opened in `body` stay in the namespace afterwards; nothing in `body`
    /// may suspend (network namespaces are per thread).
    func inside<T>(_ body: () throws -> T) throws -> T {
        let original = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC)
        let target = open("/run/netns/\(name)", O_RDONLY | O_CLOEXEC)
        defer {
            close(original)
            close(target)
        }
        guard original >= 0, target >= 0 else { throw SystemError("open", path: "/run/netns/\(name)", errno: errno) }
        let entered = ifm_test_enter_network_namespace(target)
        guard entered == 0 else {
            throw SystemError("setns", path: "/run/netns/\(name)", errno: -entered)
        }
        defer { precondition(ifm_test_enter_network_namespace(original) == 0, "cannot return to the original namespace") }
        return try body()
    }
}

private final class Counter: @unchecked Sendable {
    private var value = 0
    private let lock = NSLock()
    func next() -> Int { lock.withLock { value += 1; return value } }
}

extension NetworkNamespace {
    /// Sends from the far end of a veth pair (this namespace, passed as
    /// `far` to `vethPair`) back to its near end, received by a bound socket.
    func sendOverVethBack(to near: NetworkNamespace, count: Int, size: Int) throws {
        let receiver = try near.inside { try UDPSocket(bindTo: "198.18.200.1", port: 7001) }
        let sender = try inside { try UDPSocket(bindTo: nil, port: 0) }
        for _ in 0..<count { try sender.send(bytes: size - 28, to: "198.18.200.1", port: 7001) }
        for _ in 0..<count { _ = try receiver.receive() }
    }
}
