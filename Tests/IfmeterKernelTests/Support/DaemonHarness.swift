import CTestTun
import Foundation
import Glibc
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// Runs the real ifmeterd inside a test's network namespace, on a state
/// directory and boot-id file of its own, and reads the store it leaves.
final class DaemonHarness {
    /// Where the daemon runs; a test may move it to another namespace between runs.
    var namespace: NetworkNamespace
    let directory: URL
    var stateDirectory: String { directory.appendingPathComponent("state").path }
    var bootIDPath: String { directory.appendingPathComponent("boot_id").path }
    var configPath: String { directory.appendingPathComponent("ifmeter.conf").path }
    var logPath: String { directory.appendingPathComponent("ifmeterd.log").path }
    private(set) var process: Process?

    init(namespace: NetworkNamespace, configuration extra: String = "") throws {
        self.namespace = namespace
        directory = try TestEnvironment.temporaryDirectory("ifmeterd")
        try setBootID("test-boot-1")
        try writeConfiguration(extra)
    }

    deinit {
        if let process, process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
        try? FileManager.default.removeItem(at: directory)
    }

    func setBootID(_ id: String) throws {
        try "\(id)\n".write(toFile: bootIDPath, atomically: true, encoding: .utf8)
    }

    func writeConfiguration(_ extra: String) throws {
        try "[Daemon]\nBootIDPath=\(bootIDPath)\n\(extra)".write(toFile: configPath, atomically: true, encoding: .utf8)
    }

    /// `withoutNetAdmin`: as the packaged unit runs it, without
    /// CAP_NET_ADMIN (so SO_RCVBUFFORCE fails and net.core.rmem_max caps
    /// SO_RCVBUF), dropped from the bounding set before the exec.
    private func command(_ extra: [String], withoutNetAdmin: Bool = false) -> [String] {
        ["/usr/bin/env", "ip", "netns", "exec", namespace.name]
            + (withoutNetAdmin ? ["/usr/bin/setpriv", "--bounding-set", "-net_admin", "--"] : [])
            + [TestEnvironment.binary("ifmeterd"), "--config", configPath, "--state-dir", stateDirectory] + extra
    }

    /// `ifmeterd --once`; must succeed.
    func runOnce(clockOffset: Double = 0, extra: [String] = [], environment extraEnvironment: [String: String] = [:]) throws {
        let result = try runOnceAllowingFailure(clockOffset: clockOffset, extra: extra, environment: extraEnvironment)
        if result.status != 0 {
            Issue.record("ifmeterd --once exited \(result.status): \(result.standardError)")
            throw CancellationError()
        }
    }

    /// `ifmeterd --once`, whatever its exit status, with what it printed.
    func runOnceAllowingFailure(
        clockOffset: Double = 0, extra: [String] = [], environment extraEnvironment: [String: String] = [:]
    ) throws -> ProcessResult {
        let arguments = command(["--once"] + extra)
        var environment = ProcessInfo.processInfo.environment.merging(extraEnvironment) { _, new in new }
        environment["IFMETER_TEST_CLOCK_OFFSET"] = String(clockOffset)
        return try runProcess(arguments[0], Array(arguments.dropFirst()), environment: environment)
    }

    /// Starts the daemon loop and waits until its first commit is in the store.
    func start(interval: Double = 60, commitInterval: Double = 300, extra: [String] = [], environment: [String: String] = [:]) throws {
        try launch(command(["--interval", String(interval), "--commit-interval", String(commitInterval)] + extra), environment: environment)
    }

    /// Starts the daemon loop without `--config`, as `make run` does, so
    /// that it reads the default path, /etc/ifmeter/ifmeter.conf: in a
    /// private mount namespace whose /etc is the host's under an overlay on
    /// a tmpfs, with no `ifmeter/` in it. The file there is the test's to
    /// write (`writeDefaultConfiguration`), and the host's is never read.
    func startOnTheDefaultConfiguration(interval: Double = 60) throws {
        let overlay = directory.appendingPathComponent("etc-overlay").path
        try FileManager.default.createDirectory(atPath: overlay, withIntermediateDirectories: true)
        let script = """
            mount -t tmpfs ifmeter-test "$1" && mkdir "$1/upper" "$1/work" \
              && mount -t overlay ifmeter-test -o lowerdir=/etc,upperdir="$1/upper",workdir="$1/work" /etc \
              && rm -rf /etc/ifmeter && shift && exec "$@"
            """
        try launch(
            ["/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh", overlay,
             "/usr/bin/env", "ip", "netns", "exec", namespace.name,
             TestEnvironment.binary("ifmeterd"), "--state-dir", stateDirectory, "--interval", String(interval)],
            environment: [:])
    }

    /// Writes the default configuration file where the daemon that
    /// `startOnTheDefaultConfiguration` started reads it (its /etc).
    func writeDefaultConfiguration(_ text: String) throws {
        let pid = try #require(process?.processIdentifier)
        let result = try runProcess(
            "/usr/bin/nsenter", ["--target", String(pid), "--mount", "/bin/sh", "-c",
                                 "mkdir -p /etc/ifmeter && cat > /etc/ifmeter/ifmeter.conf", "sh"],
            input: text)
        #expect(result.status == 0, "\(result.standardError)")
    }

    /// The default configuration file as the daemon that
    /// `startOnTheDefaultConfiguration` started sees it.
    func readDefaultConfiguration() throws -> String {
        let pid = try #require(process?.processIdentifier)
        return try runProcess("/usr/bin/nsenter", ["--target", String(pid), "--mount", "/bin/cat", "/etc/ifmeter/ifmeter.conf"]).standardOutput
    }

    private func launch(_ arguments: [String], environment: [String: String]) throws {
        let process = Process()
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        if !FileManager.default.fileExists(atPath: logPath) { _ = FileManager.default.createFile(atPath: logPath, contents: nil) }
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        log.seekToEndOfFile()
        process.standardError = log
        process.standardOutput = log
        try process.run()
        self.process = process
        try waitForLog("watched interface", occurrences: startsSoFar + 1)
        startsSoFar += 1
    }

    private var startsSoFar = 0

    /// Starts the daemon loop as systemd restarts a service whose descriptor
    /// it kept (FileDescriptorStoreMax=): `descriptor` as fd 3, named `name`
    /// (LISTEN_FDS=1, LISTEN_FDNAMES, LISTEN_PID the daemon's own). Returns
    /// its pid once it logged its start; end it with `end`.
    func startPassing(
        _ descriptor: Int32, named name: String, interval: Double = 60, commitInterval: Double = 300, environment: [String: String] = [:]
    ) throws -> pid_t {
        try startPassing([(descriptor, name)], interval: interval, commitInterval: commitInterval, environment: environment)
    }

    /// The same with several descriptors, as fds 3, 4, ... in that order.
    func startPassing(
        _ descriptors: [(descriptor: Int32, name: String)], interval: Double = 60, commitInterval: Double = 300,
        environment: [String: String] = [:], withoutNetAdmin: Bool = false
    ) throws -> pid_t {
        func quoted(_ word: String) -> String { "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let arguments = command(
            ["--interval", String(interval), "--commit-interval", String(commitInterval)], withoutNetAdmin: withoutNetAdmin)
        let exports = environment.map { "\($0.key)=\(quoted($0.value))" }.joined(separator: " ")
        let names = descriptors.map(\.name).joined(separator: ":")
        // `ip netns exec` and env exec in place: the daemon keeps the shell's pid.
        let command = "export LISTEN_PID=$$ LISTEN_FDS=\(descriptors.count) LISTEN_FDNAMES=\(quoted(names)) \(exports); exec \(arguments.map(quoted).joined(separator: " "))"
        let pid = descriptors.map(\.descriptor).withUnsafeBufferPointer {
            ifm_test_spawn_passing(command, $0.baseAddress, Int32($0.count), logPath)
        }
        guard pid > 0 else { throw SystemError("posix_spawn", path: "/bin/sh", errno: -pid) }
        try waitForLog("watched interface", occurrences: startsSoFar + 1)
        startsSoFar += 1
        return pid
    }

    /// Waits up to ten seconds for `text` to appear `occurrences` times in the log.
    func waitForLog(_ text: String, occurrences: Int = 1) throws {
        for _ in 0..<1000 {
            let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            if log.components(separatedBy: text).count - 1 >= occurrences { return }
            if let process, !process.isRunning {
                Issue.record("ifmeterd exited \(process.terminationStatus): \(log)")
                throw CancellationError()
            }
            usleep(10_000)
        }
        Issue.record("timed out waiting for \"\(text)\" in the daemon log: \((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "")")
        throw CancellationError()
    }

    func signal(_ number: Int32) {
        guard let process else { return }
        kill(process.processIdentifier, number)
    }

    /// `stop` for a daemon started by `startPassing`: sends `number` to
    /// `pid` and waits for it; returns its wait status (0: exited 0).
    @discardableResult
    func end(_ pid: pid_t, with number: Int32 = SIGTERM) -> Int32 {
        kill(pid, number)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        return status
    }

    /// Sends `number` and waits for the daemon to exit; returns its status.
    @discardableResult
    func stop(with number: Int32 = SIGTERM) -> Int32 {
        guard let process else { return -1 }
        kill(process.processIdentifier, number)
        process.waitUntilExit()
        self.process = nil
        return process.terminationStatus
    }

    /// `ifmeter` on this daemon's store and configuration, run here or in its namespace (whose links it then reads).
    func ifmeter(_ arguments: [String], inNamespace: Bool = false) throws -> ProcessResult {
        let command = [TestEnvironment.binary("ifmeter"), "--state-dir", stateDirectory, "--config", configPath] + arguments
        return inNamespace ? try namespace.run(command) : try runProcess(command[0], Array(command.dropFirst()))
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// The store as `ifmeter` reads it: the file, completed by what the
    /// daemon journaled since its last store commit.
    func store() throws -> CounterStore {
        try JournalOverlay(over: try storeFile(), journalAt: journalPath).store
    }

    /// The store file alone, without the journal.
    func storeFile() throws -> CounterStore { try CounterStore(directory: stateDirectory, readOnly: true) }

    var journalPath: String { stateDirectory + "/" + Configuration.journalName }

    /// The journal's size in bytes; 0 when there is none.
    var journalSize: Int {
        var info = stat()
        return stat(journalPath, &info) == 0 ? Int(info.st_size) : 0
    }

    /// Waits up to ten seconds for the daemon to append to its journal
    /// (or start the next one): its size no longer `size`.
    func waitForJournal(toChangeFrom size: Int) throws {
        for _ in 0..<1000 {
            if journalSize != size { return }
            usleep(10_000)
        }
        Issue.record("timed out waiting for \(journalPath) to change from \(size) bytes: \(log)")
        throw CancellationError()
    }

    /// The stored totals of an interface; the test fails when it has none.
    func totals(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> LinkCounters {
        try #require(try totalsIfAny(name), "no totals for \(name)", sourceLocation: sourceLocation)
    }

    func totalsIfAny(_ name: String) throws -> LinkCounters? {
        try store().interfaces().first { $0.name == name }?.totals
    }

    func reasons(_ name: String) throws -> [String] {
        try store().events().filter { $0.name == name }.map(\.reason.rawValue)
    }

    /// The kernel's own counters for a link in the namespace right now.
    func kernelCounters(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> LinkCounters {
        let counters = try namespace.inside { try NetlinkLinkSource().links() }.first { $0.name == name }?.counters
        return try #require(counters, "no link \(name) in the namespace", sourceLocation: sourceLocation)
    }
}
