import Foundation
import Glibc
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// Readers never hold anything the writer needs. `nobody` holds a read transaction on the view, shared
/// fcntl locks (the whole file and SQLite's lock bytes) and flocks on every file and directory it can
/// open, and readers stopped halfway, for many commit intervals while tunnels come and go: the daemon
/// commits on time throughout, stops without losing a byte, starts again, and its files stay bounded.
@Suite(.enabled(if: TestEnvironment.isRoot, TestEnvironment.rootReason))
struct ReaderAttackTests {
    static let holder = """
        import fcntl, os, sqlite3, sys, time
        held = []
        for d in sys.argv[1:]:
            for p in [d] + [os.path.join(d, n) for n in os.listdir(d)]:
                try: fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)
                except OSError: continue
                for lock in (lambda: fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB),
                             lambda: fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB, 8, 120),
                             lambda: fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)):
                    try: lock()
                    except OSError: pass
                held.append(os.path.basename(p))
        view = sqlite3.connect('file:' + os.path.join(sys.argv[1], 'ifmeter-view.db') + '?mode=ro', uri=True)
        view.execute('BEGIN')
        view.execute('SELECT count(*) FROM interface').fetchall()
        print(' '.join(sorted(held)), flush=True)
        time.sleep(600)
        """

    private func asNobody(_ arguments: [String]) -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups"] + arguments
        return process
    }

    private func metric(_ name: String, in path: String) -> Double? {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ")[1]) }
    }

    @Test func noReaderDelaysACommitOrLosesAByte() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        let metrics = daemon.directory.appendingPathComponent("ifmeter.prom").path
        chmod(daemon.directory.path, 0o755)
        try daemon.start(interval: 0.2, commitInterval: 0.2, extra: ["--metrics-file", metrics])
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 1, size: 100)
        try daemon.waitForLog("tun0: removed")
        usleep(500_000)

        let holder = asNobody(["/usr/bin/python3", "-c", Self.holder, daemon.stateDirectory, daemon.directory.path])
        let said = Pipe()
        let complained = Pipe()
        holder.standardOutput = said
        holder.standardError = complained
        try holder.run()
        defer { kill(holder.processIdentifier, SIGKILL); holder.waitUntilExit() }
        let held = String(decoding: said.fileHandleForReading.availableData, as: UTF8.self).split(whereSeparator: \.isWhitespace).map(String.init)
        // What a reader may open, it holds; the store, its WAL and index and the lock it cannot open.
        try #require(held.contains(ReadersView.fileName) && held.contains(Configuration.journalName) && held.contains("state"),
                     "\(held) \(String(decoding: complained.fileHandleForReading.availableData, as: UTF8.self))")
        #expect(!held.contains { ["ifmeter.db", "ifmeter.db-wal", "ifmeter.db-shm", "ifmeterd.lock"].contains($0) }, "\(held)")

        // Readers stopped at different points of their reading.
        var stopped: [Process] = []
        defer { for reader in stopped { kill(reader.processIdentifier, SIGKILL); reader.waitUntilExit() } }
        for delay in [0, 2_000, 5_000, 10_000, 20_000, 50_000] as [useconds_t] {
            let reader = asNobody([TestEnvironment.binary("ifmeter"), "--state-dir", daemon.stateDirectory, "--config", daemon.configPath, "days"])
            reader.standardOutput = FileHandle.nullDevice
            reader.standardError = FileHandle.nullDevice
            try reader.run()
            usleep(delay)
            kill(reader.processIdentifier, SIGSTOP)
            stopped.append(reader)
        }

        // Many commit intervals of tunnel lives while all of it is held.
        let before = try #require(metric("ifmeter_last_commit_timestamp_seconds", in: metrics))
        for n in 1...5 { try daemon.namespace.tunTraffic(name: "vpn\(n)", rxPackets: 3, txPackets: 2, size: 1000) }
        usleep(3_000_000)
        let after = try #require(metric("ifmeter_last_commit_timestamp_seconds", in: metrics))
        #expect(after >= before + 2, "commits stalled: last commit \(before) then \(after)")
        #expect(metric("ifmeter_store_write_errors_total", in: metrics) == 0)

        // Bounded: the view and the journal within what README states.
        for (file, bound) in [(ReadersView.fileName, ReadersView.sizeLimit), (Configuration.journalName, LifeChangeRoute.journalBound)] {
            let size = (try? FileManager.default.attributesOfItem(atPath: daemon.stateDirectory + "/" + file)[.size] as? Int) ?? 0
            #expect(size <= bound, "\(file): \(size) bytes")
        }

        #expect(daemon.stop() == 0, "\(daemon.log)")
        let store = try daemon.storeFile()
        for n in 1...5 {
            let totals = try #require(try store.interfaces().first { $0.name == "vpn\(n)" }).totals
            #expect(totals.rxBytes == 3000 && totals.txBytes == 2000, "vpn\(n): \(totals)")
        }
        store.close()
        // Still held: a new daemon starts and commits.
        #expect(holder.isRunning)
        try daemon.start(interval: 0.2, commitInterval: 0.2, extra: ["--metrics-file", metrics])
        try daemon.namespace.tunTraffic(name: "vpn6", rxPackets: 1, size: 1000)
        try daemon.waitForLog("vpn6: removed")
        #expect(daemon.stop() == 0, "\(daemon.log)")
        #expect(try daemon.storeFile().interfaces().first { $0.name == "vpn6" }?.totals.rxBytes == 1000)
    }
}
