import Foundation
import FoundationXML
import Glibc
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// What other local users can do: name interfaces, hold locks, open the
/// store, plant files where ifmeter writes. Hostile users run as `nobody`.
@Suite(.enabled(if: TestEnvironment.isRoot, TestEnvironment.rootReason))
struct HostileNeighbourTests {
    /// Kernel names as octal escapes for sh's printf: combining marks after
    /// a quote and a backslash, ESC[2J, an OSC 52 clipboard write, a
    /// formula, invalid UTF-8, and the NFC and NFD spellings of "café".
    static let names: [(printf: String, encoded: String)] = [
        ("q\\042\\314\\201", "q\"\\xcc\\x81"),
        ("b\\134\\314\\201", "b\\x5c\\xcc\\x81"),
        ("\\033[2J", "\\x1b[2J"),
        ("\\033]52;c;aGk=\\007", "\\x1b]52;c;aGk=\\x07"),
        ("=1+1", "=1+1"),
        ("x\\377\\376", "x\\xff\\xfe"),
        ("caf\\303\\251", "caf\\xc3\\xa9"),
        ("cafe\\314\\201", "cafe\\xcc\\x81"),
    ]

    @Test func hostileNamesStayDistinctAndEveryOutputParses() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        let script = Self.names.map { "ip tuntap add dev \"$(printf '\($0.printf)')\" mode tun" }.joined(separator: " && ")
        try daemon.namespace.exec(["sh", "-c", script])
        let textfiles = daemon.directory.appendingPathComponent("textfiles")
        try FileManager.default.createDirectory(at: textfiles, withIntermediateDirectories: true)
        let metrics = textfiles.appendingPathComponent("ifmeter.prom").path
        // Twice: the second start publishes every interface the store knows.
        try daemon.runOnce(extra: ["--metrics-file", metrics])
        try daemon.runOnce(extra: ["--metrics-file", metrics])

        // Store: one interface per kernel name, in the encoded form.
        let stored = Set(try daemon.store().interfaces().map(\.name))
        #expect(stored == Set(Self.names.map(\.encoded)))

        // Prometheus: promtool, then node_exporter.
        let check = try runProcess("/bin/sh", ["-c", "promtool check metrics < \(metrics)"])
        #expect(check.status == 0, "\(check.standardOutput)\(check.standardError)")
        let scrape = try scrapeTextfiles(in: textfiles.path)
        #expect(scrape.contains("node_textfile_scrape_error 0\n"))
        #expect(scrape.split(separator: "\n").filter { $0.hasPrefix("ifmeter_receive_bytes_total{") }.count == Self.names.count,
                "\(scrape.split(separator: "\n").filter { $0.contains("ifmeter") || $0.contains("textfile") })")

        func ifmeter(_ arguments: [String]) throws -> ProcessResult {
            try daemon.namespace.run([TestEnvironment.binary("ifmeter"), "--state-dir", daemon.stateDirectory, "--config", daemon.configPath] + arguments)
        }
        // Human output: no control byte but line feed.
        for command in [["status"], ["classes"], ["days"], ["events"], ["interfaces"], ["live", "--count", "1", "--interval", "0.1"]] {
            let result = try ifmeter(command)
            #expect(result.status == 0, "\(command): \(result.standardError)")
            let controls = result.standardOutput.unicodeScalars.filter { String.isTerminalControl($0) }
            #expect(controls.isEmpty, "\(command): \(controls.map(\.value))")
        }
        // On a terminal (script's pty) live redraws its lines in place with
        // its own sequences, raw (cursor up, erase line); a name's still reads as text.
        let live = ([TestEnvironment.binary("ifmeter"), "--state-dir", daemon.stateDirectory, "--config", daemon.configPath]
            + ["live", "--count", "2", "--interval", "0.1"]).map { "'\($0)'" }.joined(separator: " ")
        let onTerminal = try daemon.namespace.run(["script", "-qec", live, "/dev/null"])
        #expect(onTerminal.status == 0, "\(onTerminal.standardOutput)\(onTerminal.standardError)")
        let cursorUp = try NSRegularExpression(pattern: "\u{1B}\\[[0-9]+A")
        let output = onTerminal.standardOutput
        // Up over the first refresh, then over the second to take the caveat off above the summary.
        #expect(cursorUp.numberOfMatches(in: output, range: NSRange(output.startIndex..., in: output)) == 2, "\(output.debugDescription)")
        #expect(output.contains("\u{1B}[2K") && output.contains("\u{1B}[J"), "\(output.debugDescription)")
        let onScreen = cursorUp.stringByReplacingMatches(in: output, range: NSRange(output.startIndex..., in: output), withTemplate: "")
            .replacingOccurrences(of: "\u{1B}[2K", with: "").replacingOccurrences(of: "\u{1B}[J", with: "").replacingOccurrences(of: "\r", with: "")
        #expect(onScreen.unicodeScalars.filter { String.isTerminalControl($0) }.isEmpty, "\(onScreen.debugDescription)")
        #expect(onScreen.contains("\\x1b[2J"), "\(onScreen)")
        // JSON: parses, every name back.
        let status = try ifmeter(["status", "--json"])
        let document = try #require(try JSONSerialization.jsonObject(with: Data(status.standardOutput.utf8)) as? [String: Any])
        let shown = (document["interfaces"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(Set(shown) == Set(Self.names.map(\.encoded)))
        // A name typed as the kernel spells it selects that interface only.
        let one = try daemon.namespace.run(["sh", "-c", "\(TestEnvironment.binary("ifmeter")) --state-dir \(daemon.stateDirectory) --config \(daemon.configPath) status --json -i \"$(printf 'caf\\303\\251')\""])
        #expect(one.status == 0, "\(one.standardError)")
        #expect(one.standardOutput.contains("caf\\\\xc3\\\\xa9") && !one.standardOutput.contains("cafe"))

        // CSV through Python's csv module: one record per bucket, no formula.
        let export = try ifmeter(["export", "--granularity", "day"])
        #expect(export.status == 0)
        let parsed = try runProcess("/usr/bin/python3", ["-c", """
            import csv, sys
            rows = list(csv.reader(sys.stdin))
            assert rows[0][0] == "interface", rows[0]
            assert all(len(row) == len(rows[0]) for row in rows), rows
            assert not any(field[:1] in ("=", "+", "-", "@", "\\t", "\\r") for row in rows for field in row), rows
            print(len(rows) - 1)
            """], input: export.standardOutput)
        #expect(parsed.status == 0, "\(parsed.standardError)")
        #expect(parsed.standardOutput == "\(Self.names.count)\n")
    }

    /// Escaping at the scalar level for each format, on strings no kernel
    /// name can carry any more but a store copied from elsewhere can.
    @Test func everyFormatEscapesByScalar() throws {
        let hostile = ["q\"\u{301}", "\\\u{301}", "\u{1B}[2J", "=1+1", "a\r\nb", "\u{85}x", "\u{202E}txt", "a\u{200F}b", "\u{2066}x\u{7F}"]
        for text in hostile {
            let label = MetricsFile.escapeLabel(text)
            #expect(!label.unicodeScalars.contains("\n"))
            var scalars = Array(label.unicodeScalars)
            while let index = scalars.firstIndex(of: "\\") { scalars.removeSubrange(index...index + 1) }
            #expect(!scalars.contains("\""), "\(text.debugDescription)")
            let field = ExportWriter.csvField(text)
            #expect(!"=+-@\t\r".unicodeScalars.contains(field.unicodeScalars.first!) )
            // What reaches stdout has been through the terminal filter: it
            // must find nothing to rewrite in a document already escaped.
            let xml = "<t a=\"\(SVGGraph.escape(text))\">\(SVGGraph.escape(text))</t>"
            #expect(xml.terminalSafe() == xml, "\(text.debugDescription)")
            #expect(XMLParser(data: Data(xml.utf8)).parse(), "\(text.debugDescription)")
            let json = JSON.string(text).rendered()
            #expect(json.terminalSafe() == json, "\(text.debugDescription)")
            #expect(try JSONSerialization.jsonObject(with: Data(json.utf8), options: .fragmentsAllowed) as? String == text)
            #expect(!text.terminalSafe().unicodeScalars.contains { String.isTerminalControl($0) })
        }
    }

    /// The journal and the readers' view live in the runtime directory, so two daemons given one (each
    /// with its own state directory) would overwrite each other's: the second is refused, in one line.
    @Test func aSecondDaemonOnTheSameRuntimeDirectoryIsRefused() throws {
        let namespace = try NetworkNamespace()
        let first = try DaemonHarness(namespace: namespace)
        let second = try DaemonHarness(namespace: namespace)
        let runtime = try TestEnvironment.temporaryDirectory("runtime")
        defer { try? FileManager.default.removeItem(at: runtime) }
        try first.start(environment: ["RUNTIME_DIRECTORY": runtime.path])
        defer { _ = first.stop() }
        let refused = try second.runOnceAllowingFailure(environment: ["RUNTIME_DIRECTORY": runtime.path])
        #expect(refused.status == ExitCode.unavailable.rawValue)
        #expect(refused.standardError.contains("\(runtime.path): another ifmeterd is using this runtime directory"), "\(refused.standardError)")
        #expect(!FileManager.default.fileExists(atPath: second.stateDirectory + "/" + CounterStore.fileName))
        #expect(first.stop() == 0)
    }

    /// A `nobody` process holding the old world-readable lock cannot keep
    /// the daemon from starting nor make status call a dead daemon running.
    @Test func aLockHeldByAnotherUserNeitherBlocksNorFakesTheDaemon() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.runOnce()
        let lock = daemon.stateDirectory + "/ifmeterd.lock"
        var info = stat()
        #expect(stat(lock, &info) == 0 && info.st_mode & 0o777 == 0o600)
        // As an older ifmeter left it: 0644, so nobody can open and hold it.
        chmod(lock, 0o644)
        // One process as nobody (setpriv execs, it does not fork) holding an exclusive lock.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        holder.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c",
                            "import fcntl, os, time; fd = os.open('\(lock)', os.O_RDONLY); fcntl.flock(fd, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(60)"]
        let said = Pipe()
        holder.standardOutput = said
        try holder.run()
        defer { kill(holder.processIdentifier, SIGKILL); holder.waitUntilExit() }
        // It says so once it holds the lock (an empty read: it failed).
        try #require(String(decoding: said.fileHandleForReading.availableData, as: UTF8.self).hasPrefix("locked"))
        func running() throws -> Bool? {
            let result = try daemon.namespace.run([TestEnvironment.binary("ifmeter"), "--state-dir", daemon.stateDirectory, "--config", daemon.configPath, "status", "--json"])
            let document = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
            return (document?["daemon"] as? [String: Any])?["running"] as? Bool
        }
        #expect(try running() == false)
        try daemon.start(interval: 60)
        #expect(try running() == true)
        #expect(stat(lock, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(daemon.stop() == 0)
        #expect(try running() == false)
        // A liveness record another user wrote, naming their own live process, is not believed.
        #expect(holder.isRunning)
        let record = daemon.stateDirectory + "/ifmeterd.live"
        try "\(holder.processIdentifier) \(FileSystem.processStartTime(holder.processIdentifier) ?? 0)\n".write(toFile: record, atomically: false, encoding: .utf8)
        chown(record, 65534, 65534)
        #expect(try running() == false)
    }

    /// Planted files in the metrics directory: the daemon neither hangs on a
    /// FIFO, reads /dev/zero, keeps a planted huge value, nor stops at a
    /// directory where an older ifmeter put its temporary file.
    @Test func plantedFilesInTheMetricsDirectory() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.namespace.tunTraffic(name: "tun0", persist: true)
        let textfiles = daemon.directory.appendingPathComponent("textfiles").path
        try FileManager.default.createDirectory(atPath: textfiles, withIntermediateDirectories: true)
        let metrics = textfiles + "/ifmeter.prom"
        func runOnceWithin(seconds: Int) throws {
            let result = try daemon.namespace.run(["timeout", String(seconds), TestEnvironment.binary("ifmeterd"), "--config", daemon.configPath,
                                                   "--state-dir", daemon.stateDirectory, "--metrics-file", metrics, "--once"])
            #expect(result.status == 0, "\(result.standardError)")
        }
        #expect(mkfifo(metrics, 0o666) == 0)
        try runOnceWithin(seconds: 10)
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 2, size: 100)
        unlink(metrics)
        try FileManager.default.createSymbolicLink(atPath: metrics, withDestinationPath: "/dev/zero")
        try runOnceWithin(seconds: 10)
        unlink(metrics)
        try "ifmeter_receive_bytes_total{device=\"tun0\",class=\"tunnel\"} 18446744073709551615\n".write(toFile: metrics, atomically: false, encoding: .utf8)
        for pid in 1...4096 { mkdir(textfiles + "/.ifmeter.prom.\(pid).tmp", 0o755) }
        try runOnceWithin(seconds: 10)
        let text = try String(contentsOfFile: metrics, encoding: .utf8)
        #expect(text.contains("ifmeter_receive_bytes_total{device=\"tun0\",class=\"tunnel\"} 200\n"))
        let size = (try FileManager.default.attributesOfItem(atPath: metrics)[.size] as? NSNumber)?.intValue ?? .max
        #expect(size < 64 * 1024)
        // In-process too: a directory at this process's old-style name.
        let own = textfiles + "/own.prom"
        mkdir(textfiles + "/.own.prom.\(getpid()).tmp", 0o755)
        try FileSystem.writeAtomically(Array("x 1\n".utf8), to: own)
        #expect(try String(contentsOfFile: own, encoding: .utf8) == "x 1\n")
    }

    /// The store, its WAL and index are the daemon's alone (0600): `nobody` reads the daemon's view
    /// and journal instead, and cannot open the store to hold a read transaction or a lock on it.
    @Test func anotherUserReadsTheViewNeverTheStore() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.start(interval: 60, commitInterval: 0.2)
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 2, size: 100)
        try daemon.waitForLog("tun0: removed")
        for file in ["ifmeter.db", "ifmeter.db-wal", "ifmeter.db-shm"] {
            var info = stat()
            #expect(stat(daemon.stateDirectory + "/" + file, &info) == 0 && info.st_mode & 0o777 == 0o600, "\(file)")
        }
        let result = try daemon.namespace.run(["runuser", "-u", "nobody", "--", TestEnvironment.binary("ifmeter"),
                                               "--state-dir", daemon.stateDirectory, "--config", daemon.configPath, "status", "--json", "--all"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("\"tun0\""))
        #expect(result.standardError.isEmpty)
        let sqlite = try daemon.namespace.run(["runuser", "-u", "nobody", "--", "sqlite3", daemon.stateDirectory + "/ifmeter.db", "BEGIN; SELECT count(*) FROM interface;"])
        #expect(sqlite.status != 0)
        #expect(daemon.stop() == 0)
    }

    /// `graph --svg` onto a planted symlink replaces the link, never writes through it.
    @Test func graphReplacesAPlantedSymlink() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.runOnce()
        let victim = daemon.directory.appendingPathComponent("victim").path
        try "keep\n".write(toFile: victim, atomically: true, encoding: .utf8)
        let svg = daemon.directory.appendingPathComponent("graph.svg").path
        try FileManager.default.createSymbolicLink(atPath: svg, withDestinationPath: victim)
        let result = try daemon.namespace.run([TestEnvironment.binary("ifmeter"), "--state-dir", daemon.stateDirectory, "--config", daemon.configPath, "graph", "--svg", svg])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "keep\n")
        #expect(XMLParser(data: try Data(contentsOf: URL(fileURLWithPath: svg))).parse())
    }

    /// The directory of a file written atomically swapped for a symlink
    /// (to a directory holding a device) and back while it is written, as
    /// someone who may write its parent can: the check of the target, the
    /// temporary file and the rename all go through one descriptor of the
    /// directory, so the device the link leads to is never replaced. (By
    /// path, a check made in one directory let the rename land in the other:
    /// a root's `graph --svg` then replaced a device in /dev.)
    @Test func aDirectorySwappedForASymlinkNeverMovesTheWriteElsewhere() throws {
        let base = try TestEnvironment.temporaryDirectory("swapped")
        defer { try? FileManager.default.removeItem(at: base) }
        let out = base.path + "/out", parked = base.path + "/out.real", link = base.path + "/out.link", decoy = base.path + "/decoy"
        #expect(mkdir(out, 0o755) == 0 && mkdir(decoy, 0o755) == 0 && symlink(decoy, link) == 0)
        #expect(mknod(decoy + "/null", S_IFCHR | 0o666, dev_t(1 << 8 | 3)) == 0)  // 1:3, as /dev/null
        let stop = base.path + "/stop"
        let stopped = DispatchSemaphore(value: 0)
        // `out`: the directory, nothing, the symlink, nothing, and again.
        Thread {
            while access(stop, F_OK) != 0 {
                rename(out, parked)
                rename(link, out)
                rename(out, link)
                rename(parked, out)
            }
            stopped.signal()
        }.start()
        var written = 0
        let deadline = Date().addingTimeInterval(3)
        while Date() < deadline && FileSystem.nonFileKind(decoy + "/null") == .device {
            if (try? FileSystem.writeAtomically(Array("<svg/>\n".utf8), to: out + "/null")) != nil { written += 1 }
        }
        #expect(FileManager.default.createFile(atPath: stop, contents: nil))
        stopped.wait()
        #expect(FileSystem.nonFileKind(decoy + "/null") == .device, "the device behind the symlink was replaced")
        #expect(written > 0)
    }

    /// `graph --svg` renames its picture over PATH: named on the store it
    /// reads (or the journal beside it), that would be the store gone. Also
    /// spelt otherwise, for a file a stopped daemon leaves no trace of (its
    /// WAL index, which the next daemon would open).
    @Test(arguments: ["ifmeter.db", "ifmeterd.journal", "./ifmeter.db-shm", "../state/ifmeter.db-wal"])
    func graphOntoTheStoresOwnFilesIsRefused(name: String) throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.runOnce()
        let target = daemon.stateDirectory + "/" + name
        let before = try FileSystem.readBytes(target)
        let result = try daemon.namespace.run([TestEnvironment.binary("ifmeter"), "--state-dir", daemon.stateDirectory, "--config", daemon.configPath, "graph", "--svg", target])
        #expect(result.status == ExitCode.usage.rawValue, "\(result.standardError)")
        #expect(result.standardError.split(separator: "\n").count == 1)
        #expect(result.standardError.contains(target))
        #expect(try FileSystem.readBytes(target) == before)
        try daemon.runOnce()
    }

    /// A link whose dump message exceeds 64 KiB (the most altnames the
    /// kernel allows, each 124 bytes) is listed, and so is every link after it.
    @Test func aLinkWithManyLongAltnamesNeitherVanishesNorHidesLaterLinks() throws {
        let namespace = try NetworkNamespace()
        try namespace.exec(["sh", "-c", "for n in d0 d1 d2; do ip tuntap add dev $n mode tun; done"])
        let batch = (1...600).map { String(format: "link property add dev d1 altname a%03d%@", $0, String(repeating: "0", count: 120)) }.joined(separator: "\n")
        _ = try namespace.run(["sh", "-c", "printf '%s\\n' '\(batch.replacingOccurrences(of: "\n", with: "' '"))' | ip -force -batch -"])
        let size = try namespace.exec(["sh", "-c", "ip -d link show d1 | wc -c"])
        #expect((Int(size.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) > 64 * 1024)
        let names = try namespace.inside { try NetlinkLinkSource().links().map(\.name) }
        #expect(names == ["lo", "d0", "d1", "d2"])
        let interfaces = try namespace.exec([TestEnvironment.binary("ifmeter"), "interfaces", "--all"])
        #expect(interfaces.contains("d2"))
    }
}
