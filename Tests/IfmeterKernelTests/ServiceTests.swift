import CTestTun
import Foundation
import Glibc
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// The unit file as systemd judges it, and the notify protocol over a real
/// unix datagram socket standing in for systemd's.
@Suite struct ServiceTests {
    static let unitSource = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("systemd/ifmeterd.service")

    /// The units as `make install` writes them, the service pointing at
    /// the built binary; returns the directory and the service.
    func installedUnit() throws -> (URL, URL) {
        let directory = try TestEnvironment.temporaryDirectory("unit")
        let text = try String(contentsOf: Self.unitSource, encoding: .utf8)
            .replacingOccurrences(of: "@SBINDIR@", with: TestEnvironment.binaries.path)
            .replacingOccurrences(of: "@SYSCONFDIR@", with: "/etc")
            .replacingOccurrences(of: "@DOCDIR@", with: "/usr/share/doc/ifmeter")
        let unit = directory.appendingPathComponent("ifmeterd.service")
        try text.write(to: unit, atomically: true, encoding: .utf8)
        try FileManager.default.copyItem(
            at: Self.unitSource.deletingPathExtension().appendingPathExtension("socket"),
            to: directory.appendingPathComponent("ifmeterd.socket"))
        return (directory, unit)
    }

    @Test(arguments: ["ifmeterd.service", "ifmeterd.socket"])
    func theUnitVerifiesClean(name: String) throws {
        let (directory, _) = try installedUnit()
        defer { try? FileManager.default.removeItem(at: directory) }
        // The man pages it names are checked against man/ (DistributionTests).
        let result = try runProcess("/usr/bin/systemd-analyze", ["verify", "--man=no", directory.appendingPathComponent(name).path])
        #expect(result.status == 0)
        #expect(result.standardError.isEmpty, "\(result.standardError)")
    }

    @Test func theUnitsExposureIsAtMostTwo() throws {
        let (directory, unit) = try installedUnit()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try runProcess("/usr/bin/systemd-analyze", ["security", "--offline=yes", "--no-pager", unit.path])
        let line = try #require(result.standardOutput.split(separator: "\n").first { $0.contains("Overall exposure level") })
        let score = try #require(line.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) })
        #expect(score <= 2.0, "\(line)")
        // What the daemon needs stays allowed: netlink, the host's network.
        let text = try String(contentsOf: unit, encoding: .utf8)
        #expect(text.contains("RestrictAddressFamilies=AF_NETLINK AF_UNIX"))
        #expect(!text.split(separator: "\n").contains { $0.hasPrefix("PrivateNetwork=") })
        #expect(text.contains("Type=notify"))
    }

    /// Under systemd stderr is the journal stream JOURNAL_STREAM names
    /// (device:inode): every line carries a priority prefix. (A terminal that
    /// merely inherited the variable gets none: LogTests.)
    @Test func journalLinesCarryPriorityPrefixes() throws {
        let directory = try TestEnvironment.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("stderr").path
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        var info = stat()
        #expect(stat(log, &info) == 0)
        var environment = ProcessInfo.processInfo.environment
        environment["JOURNAL_STREAM"] = "\(info.st_dev):\(info.st_ino)"
        let result = try runProcess("/bin/sh", ["-c", "exec \"$0\" --state-dir \"$1\" --once 2>>\"$2\"", TestEnvironment.binary("ifmeterd"),
                                                directory.appendingPathComponent("s").path, log], environment: environment)
        #expect(result.status == 0)
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        #expect(!lines.isEmpty)
        #expect(lines.allSatisfy { $0.hasPrefix("<") && $0.dropFirst(2).hasPrefix(">") })
    }
}

/// A unix datagram socket bound where `$NOTIFY_SOCKET` will point.
final class NotifySocket {
    let path: String
    let fd: Int32

    convenience init(in directory: URL) throws {
        try self.init(address: directory.appendingPathComponent("notify.sock").path)
    }

    /// `address` as `$NOTIFY_SOCKET` spells it: a path, or `@name` for an
    /// abstract socket (one of the caller's network namespace).
    init(address: String) throws {
        path = address
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var sockaddress = sockaddr_un()
        sockaddress.sun_family = sa_family_t(AF_UNIX)
        let abstract = address.hasPrefix("@")
        withUnsafeMutableBytes(of: &sockaddress.sun_path) { buffer in
            for (index, byte) in address.utf8.enumerated() { buffer[index] = index == 0 && abstract ? 0 : byte }
        }
        let length = abstract ? MemoryLayout.offset(of: \sockaddr_un.sun_path)! + address.utf8.count : MemoryLayout<sockaddr_un>.size
        let status = withUnsafePointer(to: &sockaddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(length)) }
        }
        guard status == 0 else { throw SystemError("bind", path: path, errno: errno) }
    }

    deinit { close(fd) }

    /// Messages until one contains `wanted` (or ten seconds pass without one).
    func read(until wanted: String) -> [String] {
        var messages: [String] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 10_000) == 1 else { return messages }
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { return messages }
            let message = String(decoding: buffer[0..<count], as: UTF8.self)
            messages.append(message)
            if message.split(separator: "\n").contains(where: { $0 == wanted }) { return messages }
        }
    }
}

@Suite(.enabled(if: TestEnvironment.isRoot, TestEnvironment.rootReason))
struct NotifyTests {
    @Test func readyOnlyAfterTheFirstCommitThenWatchdogReloadAndStopping() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 1, persist: true)
        let notify = try NotifySocket(in: daemon.directory)
        try daemon.start(interval: 60, environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "200000"])
        let startup = notify.read(until: "READY=1")
        #expect(startup.last?.hasPrefix("READY=1\nSTATUS=counting 1 interface, last commit ") == true, "\(startup)")
        // READY=1 means the store is open and the first sample committed.
        #expect(try daemon.store().interfaces().map(\.name) == ["tun0"])
        #expect(notify.read(until: "WATCHDOG=1").last == "WATCHDOG=1")
        daemon.signal(SIGHUP)
        let reload = notify.read(until: "RELOADING=1")
        #expect(reload.last == "RELOADING=1")
        #expect(notify.read(until: "READY=1").last?.hasPrefix("READY=1") == true)
        daemon.signal(SIGTERM)
        #expect(notify.read(until: "STOPPING=1").last == "STOPPING=1")
        #expect(daemon.stop() == 0)
    }

    /// The socket of ifmeterd.socket (ListenNetlink=route 1, ReceiveBuffer=),
    /// played by the test: systemd opens it bound to the link group with a
    /// buffer forced past what the daemon may ask. The daemon takes it as it
    /// is, never cutting the buffer down to its own EventBufferBytes= (4M by
    /// default; 8M here), and a tunnel that lives and dies while the daemon
    /// is stopped (SIGTERM, as `systemctl stop` does) waits in it for the
    /// next process, which counts it to the byte.
    @Test func theSocketUnitsSocketIsTakenWithItsBufferAndItsQueueAcrossAStop() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 1, persist: true)
        let forced: Int32 = 8 << 20
        let socketUnit = try daemon.namespace.inside { ifm_test_listen_netlink(1, forced) }  // 1: RTMGRP_LINK
        try #require(socketUnit >= 0, "ListenNetlink: \(String(cString: strerror(-socketUnit)))")
        defer { close(socketUnit) }

        let first = try daemon.startPassing(socketUnit, named: "link-events")
        #expect(ifm_test_receive_buffer(socketUnit) == 2 * forced, "the daemon changed the socket unit's ReceiveBuffer=")
        #expect(daemon.end(first) == 0, "\(daemon.log)")

        try daemon.namespace.tunTraffic(name: "tun8", rxPackets: 7, size: 100)
        let next = try daemon.startPassing(socketUnit, named: "link-events")
        #expect(daemon.end(next) == 0, "\(daemon.log)")
        let counted = try daemon.totals("tun8")
        #expect(counted.rxBytes == 700 && counted.rxPackets == 7, "\(counted)")
        #expect(daemon.log.contains("link events left unread by the daemon's last process"), "\(daemon.log)")
        #expect(ifm_test_receive_buffer(socketUnit) == 2 * forced)
    }

    /// With ifmeterd.socket's socket, whose queue outlives the process, a
    /// tunnel's whole life waits in the kernel for the next sample: it
    /// wakes the daemon not once (the own socket's gathering costs two
    /// wakeups), and a kill -9 before that sample loses none of it, the
    /// next process reading it from the queue, exact to the byte.
    @Test func aLifeInAQueueThatOutlivesTheDaemonWakesItNotAndSurvivesAKill() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 1, persist: true)
        let socketUnit = try daemon.namespace.inside { ifm_test_listen_netlink(1, 4 << 20) }
        try #require(socketUnit >= 0)
        defer { close(socketUnit) }
        // Samples a day apart: none falls in the test.
        let first = try daemon.startPassing(socketUnit, named: "link-events", interval: 86_400, commitInterval: 86_400)
        func sleeps() throws -> Int {
            let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(first)/task")
            return try tasks.reduce(0) { total, task in
                let status = try String(contentsOfFile: "/proc/\(first)/task/\(task)/status", encoding: .utf8)
                let line = status.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") } ?? ""
                return total + (Int(line.split(separator: "\t").last ?? "") ?? 0)
            }
        }
        // Settled in its poll (the start's last writes behind it).
        usleep(200_000)
        let before = try sleeps()
        try daemon.namespace.tunTraffic(name: "tun8", rxPackets: 7, size: 100)
        usleep(300_000)
        #expect(try sleeps() == before, "the daemon woke for the life's events")
        daemon.end(first, with: SIGKILL)

        let next = try daemon.startPassing(socketUnit, named: "link-events")
        #expect(daemon.end(next) == 0, "\(daemon.log)")
        let counted = try daemon.totals("tun8")
        #expect(counted.rxBytes == 700 && counted.rxPackets == 7, "\(counted): \(daemon.log)")
        // From the queue, not from a journal the killed process wrote.
        #expect(daemon.log.contains("link events left unread by the daemon's last process, kept by the service manager: applied"), "\(daemon.log)")
    }

    /// A passed socket as the unprivileged daemon finds it (the packaged
    /// unit has no CAP_NET_ADMIN): raised with SO_RCVBUF when
    /// EventBufferBytes= asks more and net.core.rmem_max allows it, never cut
    /// down to rmem_max when the socket unit forced more (8M here; asked
    /// 16M). `forced` and `asked` in bytes as requested; the kernel keeps
    /// twice that.
    @Test(arguments: [(8 << 20, 16 << 20), (64 << 10, 1 << 20), (64 << 10, 4096)])
    func aPassedSocketsBufferUnprivilegedIsRaisedWithinRmemMaxNeverCut(forced: Int32, asked: Int) throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace(), configuration: "EventBufferBytes=\(asked)\n")
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 1, persist: true)
        let socketUnit = try daemon.namespace.inside { ifm_test_listen_netlink(1, forced) }
        try #require(socketUnit >= 0)
        defer { close(socketUnit) }
        let rmemMax = try #require(Int(try String(contentsOfFile: "/proc/sys/net/core/rmem_max", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)))
        let pid = try daemon.startPassing([(socketUnit, "link-events")], withoutNetAdmin: true)
        #expect(daemon.end(pid) == 0, "\(daemon.log)")
        let expected = max(2 * Int(forced), 2 * min(asked, rmemMax))
        #expect(Int(ifm_test_receive_buffer(socketUnit)) == expected, "rmem_max \(rmemMax)")
    }

    /// An overrun while no process reads a kept socket. systemd watches a
    /// socket unit's socket while the daemon is down and fails the unit,
    /// closing the socket and its queue, on any poll event but POLLIN: the
    /// daemon sets NETLINK_NO_ENOBUFS on it, so an overrun raises the
    /// kernel's drop count instead of an error. The next process tells the
    /// drops from those the last one saw (kept in the store) and says some
    /// events were lost; the one after it, with no new drops, does not,
    /// a `--once` run between them notwithstanding.
    @Test func anOverrunWhileNoProcessReadsLeavesTheSocketPollingInAndIsToldOnce() throws {
        // A small buffer (the socket unit's, left as it is: EventBufferBytes=
        // asks less) that a handful of tunnel lives overruns.
        let daemon = try DaemonHarness(namespace: NetworkNamespace(), configuration: "EventBufferBytes=4096\n")
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 1, persist: true)
        let socketUnit = try daemon.namespace.inside { ifm_test_listen_netlink(1, 8192) }
        try #require(socketUnit >= 0)
        defer { close(socketUnit) }
        let first = try daemon.startPassing(socketUnit, named: "link-events")
        kill(first, SIGSTOP)
        for index in 1...8 { try daemon.namespace.tunTraffic(name: "tun\(index)", rxPackets: 1) }
        daemon.end(first, with: SIGKILL)
        var watched = pollfd(fd: socketUnit, events: Int16(POLLIN), revents: 0)
        #expect(poll(&watched, 1, 0) == 1)
        #expect(watched.revents == Int16(POLLIN), "systemd would fail the socket unit on poll events \(watched.revents)")

        let lostLine = "some were lost (the queue overran while no process read it)"
        let second = try daemon.startPassing(socketUnit, named: "link-events")
        #expect(daemon.end(second) == 0, "\(daemon.log)")
        #expect(daemon.log.components(separatedBy: lostLine).count == 2, "\(daemon.log)")
        // `ifmeterd --once` in between reads a socket of its own: it leaves
        // the count kept for the socket unit's alone.
        try daemon.runOnce()
        try daemon.namespace.tunTraffic(name: "tun9", rxPackets: 1)
        let third = try daemon.startPassing(socketUnit, named: "link-events")
        #expect(daemon.end(third) == 0, "\(daemon.log)")
        #expect(daemon.log.components(separatedBy: lostLine).count == 2, "the drops the last process saw were taken for news: \(daemon.log)")
    }

    /// ifmeterd.socket opens at boot, long before the daemon's first start:
    /// what queued then follows no state the store saved (of an earlier
    /// boot) and is said so in a line of its own, not warned about as a
    /// kept socket that could not be applied. The first dump counts from
    /// there: tun0, present, is counted; tun8, gone before, is not.
    @Test func eventsQueuedBeforeABootsFirstStartAreNotAWarning() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 1, persist: true)
        let socketUnit = try daemon.namespace.inside { ifm_test_listen_netlink(1, 1 << 20) }
        try #require(socketUnit >= 0)
        defer { close(socketUnit) }
        try daemon.start(interval: 60)
        daemon.stop()
        // A reboot: another boot id; the socket unit's socket queues from early boot.
        try "\(UUID().uuidString.lowercased())\n".write(toFile: daemon.bootIDPath, atomically: true, encoding: .utf8)
        try daemon.namespace.tunTraffic(name: "tun8", rxPackets: 7, size: 100)
        let next = try daemon.startPassing(socketUnit, named: "link-events")
        #expect(daemon.end(next) == 0, "\(daemon.log)")
        #expect(daemon.log.contains("link events of this boot queued before the daemon's first start"), "\(daemon.log)")
        #expect(!daemon.log.contains("not applied"), "\(daemon.log)")
        #expect(try daemon.totalsIfAny("tun0") != nil)
        #expect(try daemon.totalsIfAny("tun8") == nil)
    }

    /// An abstract `$NOTIFY_SOCKET` (`@name`, as systemd in a container may
    /// pass), and a watchdog meant for another process: READY=1 and
    /// STOPPING=1 arrive, WATCHDOG=1 never does.
    @Test func abstractSocketAndAWatchdogForAnotherProcess() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 1, persist: true)
        let name = "@ifmeter-notify-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let notify = try daemon.namespace.inside { try NotifySocket(address: name) }
        try daemon.start(interval: 60, environment: ["NOTIFY_SOCKET": name, "WATCHDOG_USEC": "100000", "WATCHDOG_PID": "1"])
        #expect(notify.read(until: "READY=1").last?.hasPrefix("READY=1\nSTATUS=counting 1 interface") == true)
        // Five watchdog periods: an enabled watchdog would have sent ten.
        usleep(500_000)
        daemon.signal(SIGTERM)
        let rest = notify.read(until: "STOPPING=1")
        #expect(rest.last == "STOPPING=1", "\(rest)")
        #expect(!rest.contains("WATCHDOG=1"), "\(rest)")
        #expect(daemon.stop() == 0)
    }

    /// systemd may stop a service the moment it is ready: a SIGTERM sent
    /// right after READY=1 must still end the daemon cleanly, every time.
    @Test func aStopRightAfterReadyIsNeverLost() throws {
        let directory = try TestEnvironment.temporaryDirectory("ready")
        defer { try? FileManager.default.removeItem(at: directory) }
        let notify = try NotifySocket(in: directory)
        for round in 0..<20 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: TestEnvironment.binary("ifmeterd"))
            process.arguments = ["--state-dir", directory.appendingPathComponent("state").path]
            process.environment = ProcessInfo.processInfo.environment.merging(["NOTIFY_SOCKET": notify.path]) { _, new in new }
            process.standardError = FileHandle.nullDevice
            try process.run()
            #expect(notify.read(until: "READY=1").last?.hasPrefix("READY=1") == true)
            kill(process.processIdentifier, SIGTERM)
            let deadline = Date().addingTimeInterval(5)
            while process.isRunning && Date() < deadline { usleep(5_000) }
            if process.isRunning {
                Issue.record("round \(round): SIGTERM right after READY=1 was lost")
                kill(process.processIdentifier, SIGKILL)
            }
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
        }
    }
}

extension ServiceTests {
    /// A reload or a stop sent while the daemon opens a large store (a
    /// second or more) is taken once it is up: the process neither dies of
    /// the signal's default action nor loses it.
    @Test(arguments: [SIGHUP, SIGTERM])
    func aSignalDuringStartUpIsTakenOnceUp(_ signal: Int32) throws {
        let directory = try TestEnvironment.temporaryDirectory("startup")
        defer { try? FileManager.default.removeItem(at: directory) }
        let state = directory.appendingPathComponent("state").path
        _ = try mustRun(TestEnvironment.binary("ifmeterd"), ["--config", "/dev/null", "--state-dir", state, "--once"])
        // Rows every start-up check reads: the daemon is slow to come up.
        // The daemon ran in the host's namespace and counted its tunnels
        // (a developer's VPN) first: the row takes the next id.
        _ = try mustRun("/usr/bin/sqlite3", [state + "/ifmeter.db", """
            INSERT INTO interface(name, class, signal, kind, first_seen, last_seen, rx_bytes, tx_bytes, rx_packets, tx_packets)
              VALUES ('startup-tun', 'tunnel', 'kind tun', 'tun', 1764600000, 1764600000, 0, 0, 0, 0);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400000)
              INSERT INTO event(time, interface_id, boot_id, reason, old_ifindex, new_ifindex, loss, detail)
              SELECT 1764600000, (SELECT id FROM interface WHERE name = 'startup-tun'), 'b', 'removed', i, NULL, 'none', 'x' FROM n;
            """])
        let notify = try NotifySocket(in: directory)
        let log = directory.appendingPathComponent("log").path
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        // Started as systemd starts it, no signal blocked (the test runner
        // blocks some, and a blocked signal would wait for the handlers).
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [
            "-c", "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execv(sys.argv[1], sys.argv[1:])",
            TestEnvironment.binary("ifmeterd"), "--config", "/dev/null", "--state-dir", state,
        ]
        process.environment = ProcessInfo.processInfo.environment.merging(["NOTIFY_SOCKET": notify.path]) { _, new in new }
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        try process.run()
        // Sent once the daemon has the store open (after it took its first
        // steps, however slow the machine) and is reading every table.
        let descriptors = "/proc/\(process.processIdentifier)/fd"
        var opened = false
        for _ in 0..<2000 where !opened {
            let files = (try? FileManager.default.contentsOfDirectory(atPath: descriptors)) ?? []
            opened = files.contains { FileSystem.symbolicLinkTarget(descriptors + "/" + $0)?.hasSuffix("/ifmeter.db") == true }
            if !opened { usleep(1_000) }
        }
        #expect(opened)
        kill(process.processIdentifier, signal)
        let ready = notify.read(until: "READY=1").last?.hasPrefix("READY=1") == true
        #expect(ready, "the daemon died of the signal: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        if signal == SIGHUP {
            usleep(300_000)
            #expect(process.isRunning)
            kill(process.processIdentifier, SIGTERM)
        }
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { usleep(5_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0)
        if signal == SIGHUP {
            let text = try String(contentsOfFile: log, encoding: .utf8)
            #expect(text.contains("reload"), "\(text)")
        }
    }
}

/// When the watchdog is on, as sd_watchdog_enabled(3) decides it.
@Suite struct WatchdogSettingsTests {
    @Test(arguments: [
        ("200000", nil, 0.2),
        ("200000", "4242", 0.2),
        ("200000", "4243", nil),
        ("200000", "not a pid", nil),
        ("0", nil, nil),
        ("-5", nil, nil),
        ("soon", nil, nil),
        (nil, "4242", nil),
    ] as [(String?, String?, Double?)])
    func watchdogInterval(usec: String?, pid: String?, expected: Double?) {
        #expect(ServiceManager.watchdogInterval(usec: usec, pid: pid, ownPID: 4242) == expected)
    }
}

/// Which descriptors the service manager passed, as sd_listen_fds(3) with
/// names decides it.
@Suite struct PassedDescriptorTests {
    @Test(arguments: [
        ("1", "4242", "link-events", ["link-events": 3]),
        ("2", "4242", "link-events:other", ["link-events": 3, "other": 4]),
        ("2", "4242", "link-events", ["link-events": 3, "unknown": 4]),
        ("1", "4242", nil, ["unknown": 3]),
        ("1", "4243", "link-events", [:]),
        ("1", nil, "link-events", [:]),
        ("0", "4242", "", [:]),
        ("-1", "4242", "link-events", [:]),
        ("many", "4242", "link-events", [:]),
        (nil, "4242", "link-events", [:]),
    ] as [(String?, String?, String?, [String: Int32])])
    func passedDescriptors(count: String?, pid: String?, names: String?, expected: [String: Int32]) {
        let passed = ServiceManager.passedDescriptors(count: count, pid: pid, names: names, ownPID: 4242)
        #expect(Dictionary(passed.map { ($0.name, $0.descriptor) }, uniquingKeysWith: { first, _ in first }) == expected)
        #expect(passed.count == expected.count)
    }
}

/// The drop count a kept event socket's last reader saw, as the store keeps
/// it, and what the next process takes from it.
@Suite struct EventSocketDropsTests {
    @Test(arguments: [
        ("b1 42 7", EventSocketDrops(bootID: "b1", socket: 42, drops: 7)),
        ("b1 42 4294967295", EventSocketDrops(bootID: "b1", socket: 42, drops: .max)),
        ("b1 42 4294967296", nil),  // wider than the kernel's count
        ("b1 42", nil),
        ("b1 42 7 8", nil),
        (" 42 7", nil),
        ("b1 -1 7", nil),
        ("b1 42 x", nil),
        ("", nil),
    ] as [(String, EventSocketDrops?)])
    func parse(text: String, expected: EventSocketDrops?) {
        #expect(EventSocketDrops(text: text) == expected)
        if let expected { #expect(expected.text == text) }
    }

    /// Only the socket it was recorded on, in the boot it was recorded in,
    /// takes the recorded count; any other starts from 0.
    @Test(arguments: [
        (42 as UInt64, "b1", 7 as UInt32),
        (43, "b1", 0),
        (42, "b2", 0),
        (0, "b1", 0),
    ] as [(UInt64, String, UInt32)])
    func seen(socket: UInt64, bootID: String, expected: UInt32) {
        #expect(EventSocketDrops(bootID: "b1", socket: 42, drops: 7).seen(onSocket: socket, bootID: bootID) == expected)
        #expect(EventSocketDrops(bootID: "b1", socket: 0, drops: 7).seen(onSocket: 0, bootID: "b1") == 0)
    }
}
