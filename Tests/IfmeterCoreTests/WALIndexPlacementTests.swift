import Foundation
import Glibc
import Testing
@testable import IfmeterCore

/// `ifmeterd --wal-index-in`: the store's WAL index bound to a file on a
/// tmpfs, as ifmeterd.service does before the daemon starts. Each test
/// runs in a mount namespace of its own (`unshare --mount`), so no mount
/// outlives it or reaches the host.
@Suite(.enabled(if: TestEnvironment.isRoot, TestEnvironment.rootReason))
struct WALIndexPlacementTests {
    /// Runs `script` (bash) in a private mount namespace, with a tmpfs
    /// mounted on $RUN and these variables set: D (ifmeterd), T
    /// (ifmeter-testnet), NS (the daemon's network namespace), C, S (its
    /// configuration and state directory), LOG.
    func inMountNamespace(_ daemon: DaemonHarness, _ script: String) throws -> ProcessResult {
        let run = daemon.directory.appendingPathComponent("run").path
        try FileManager.default.createDirectory(atPath: run, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: daemon.stateDirectory, withIntermediateDirectories: true)
        let variables = [
            "D": TestEnvironment.binary("ifmeterd"), "T": TestEnvironment.binary("ifmeter-testnet"), "NS": daemon.namespace.name,
            "C": daemon.configPath, "S": daemon.stateDirectory, "RUN": run, "LOG": daemon.logPath,
        ]
        let environment = ProcessInfo.processInfo.environment.merging(variables) { $1 }
        return try runProcess("/usr/bin/unshare", ["--mount", "--propagation", "private", "bash", "-c", """
            set -eu
            mount -t tmpfs ifmeter-test "$RUN"
            \(script)
            """], environment: environment)
    }

    /// Bound before the daemon starts: the daemon maps the file in memory,
    /// a plain SQLite program reading the store by its path while the
    /// daemon runs sees each commit (the one index, to the byte), and the
    /// file on disk under the mount is never written. A second call (a
    /// restart) finds it bound and leaves it.
    @Test func theIndexInMemoryIsTheOneEveryProgramOpens() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        let result = try inMountNamespace(daemon, """
            "$D" --config "$C" --state-dir "$S" --wal-index-in "$RUN"
            "$D" --config "$C" --state-dir "$S" --wal-index-in "$RUN"
            echo "same file: $(stat -c %d:%i "$S/ifmeter.db-shm") $(stat -c %d:%i "$RUN/ifmeter.db-shm")"
            ip netns exec "$NS" "$D" --config "$C" --state-dir "$S" --interval 0.2 --commit-interval 0 2>"$LOG" &
            daemon=$!
            for _ in $(seq 200); do grep -qs "watched interfaces" "$LOG" && break; sleep 0.05; done
            ip netns exec "$NS" "$T" --name vpn0 --rx-packets 3 --tx-packets 2 --size 100 >/dev/null
            ip netns exec "$NS" "$T" --name vpn0 --rx-packets 4 --size 100 >/dev/null
            query="SELECT sum(rx_bytes) || ' ' || sum(tx_bytes) || ' ' || count(*) FROM life WHERE name = 'vpn0' AND ended IS NOT NULL"
            seen=
            for _ in $(seq 200); do
              seen=$(sqlite3 "$S/ifmeter.db" "$query")
              [ "$seen" = "700 200 2" ] && break
              sleep 0.05
            done
            echo "reader while the daemon runs: $seen"
            echo "daemon maps: $(awk '/ifmeter.db-shm/ {print $5}' /proc/$daemon/maps | sort -u) $(stat -c %i "$RUN/ifmeter.db-shm")"
            kill -TERM $daemon
            wait $daemon
            echo "after the stop: $(sqlite3 "$S/ifmeter.db" "$query")"
            "$D" --config "$C" --state-dir "$S" --wal-index-out "$RUN"
            "$D" --config "$C" --state-dir "$S" --wal-index-out "$RUN"
            echo "on disk under the mount: $(stat -c %s "$S/ifmeter.db-shm") bytes; in $RUN: $(ls "$RUN" | wc -l) files"
            """)
        #expect(result.status == 0, "\(result.standardError)")
        let index = "\(daemon.stateDirectory)/ifmeter.db-shm"
        let memory = "\(daemon.directory.path)/run/ifmeter.db-shm"
        #expect(result.standardError == """
            ifmeterd: WAL index \(index) bound to \(memory): its writes stay in memory
            ifmeterd: WAL index \(index) already bound to \(memory)
            ifmeterd: WAL index \(index) is on disk again
            ifmeterd: WAL index \(index) was not bound: nothing to undo

            """)
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        let same = lines.first { $0.hasPrefix("same file: ") }?.split(separator: " ").suffix(2)
        #expect(same?.first == same?.last && same?.first != nil, "\(lines)")
        #expect(lines.contains("reader while the daemon runs: 700 200 2"), "\(lines)")
        let maps = lines.first { $0.hasPrefix("daemon maps: ") }?.split(separator: " ").suffix(2)
        #expect(maps?.first == maps?.last && maps?.first != nil, "\(lines)")
        #expect(lines.contains("after the stop: 700 200 2"), "\(lines)")
        #expect(lines.contains("on disk under the mount: 0 bytes; in \(daemon.directory.path)/run: 0 files"), "\(lines)")
    }

    /// A process with the store open keeps the index where it is, in
    /// either direction: moving it under a process would give two
    /// processes two indexes of one store. Here a daemon started before
    /// any mount, then a read-only `sqlite3` left open (it holds no lock on
    /// the index file, only its shared lock on the store), then a daemon
    /// running on the bound index; each named by its pid, and once it has
    /// gone the next call moves the index.
    @Test func aStoreInUseKeepsItsIndexWhereItIs() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        let result = try inMountNamespace(daemon, """
            bound() { echo "$1: $(stat -c %d "$S/ifmeter.db-shm" "$S" | uniq | wc -l)"; }
            start() {
              ip netns exec "$NS" "$D" --config "$C" --state-dir "$S" --interval 0.2 --commit-interval 0 2>>"$LOG" &
              daemon=$!
              for _ in $(seq 200); do [ -s "$S/ifmeter.db-shm" ] && [ -s "$S/ifmeter.db" ] && break; sleep 0.05; done
              echo "pid $daemon"
            }
            start
            "$D" --config "$C" --state-dir "$S" --wal-index-in "$RUN"
            bound "beside a daemon"
            kill -TERM $daemon; wait $daemon
            { echo "SELECT count(*) > 0 FROM meta;"; sleep 2; } | sqlite3 -readonly "$S/ifmeter.db" >/dev/null &
            reader=$!
            sleep 0.5
            echo "pid $reader"
            "$D" --config "$C" --state-dir "$S" --wal-index-in "$RUN"
            bound "beside a reader"
            wait $reader
            "$D" --config "$C" --state-dir "$S" --wal-index-in "$RUN"
            bound "alone"
            start
            "$D" --config "$C" --state-dir "$S" --wal-index-out "$RUN"
            bound "out beside a daemon"
            kill -TERM $daemon; wait $daemon
            "$D" --config "$C" --state-dir "$S" --wal-index-out "$RUN"
            bound "out alone"
            """)
        #expect(result.status == 0, "\(result.standardError)")
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        let pids = lines.filter { $0.hasPrefix("pid ") }.map { $0.dropFirst(4) }
        try #require(pids.count == 3, "\(lines)")
        let index = "\(daemon.stateDirectory)/ifmeter.db-shm"
        let memory = "\(daemon.directory.path)/run/ifmeter.db-shm"
        #expect(result.standardError == """
            ifmeterd: WAL index \(index) left on disk: process \(pids[0]) has the store open (tried again at the next start)
            ifmeterd: WAL index \(index) left on disk: process \(pids[1]) has the store open (tried again at the next start)
            ifmeterd: WAL index \(index) bound to \(memory): its writes stay in memory
            ifmeterd: WAL index \(index) left bound to \(memory): process \(pids[2]) has the store open
            ifmeterd: WAL index \(index) is on disk again

            """)
        #expect(lines.filter { !$0.hasPrefix("pid ") } == [
            "beside a daemon: 1", "beside a reader: 1", "alone: 2", "out beside a daemon: 2", "out alone: 1",
        ])
    }

    /// What leaves the index alone, in one line each: a runtime directory
    /// on a disk (a mount would only move the writes), another file mounted
    /// there (exit 0: a later start must not stack one on it), a symlink
    /// where the index goes (never followed, either way: exit 74 naming it,
    /// and nothing to undo), a hard link to another file (the daemon's user
    /// could link one it does not own: exit 74), a store directory not made
    /// yet (exit 66), a relative directory or other options (usage, 64).
    @Test func whatLeavesTheIndexAlone() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        let state = daemon.stateDirectory
        let result = try inMountNamespace(daemon, """
            disk=$(mktemp -d /var/tmp/ifmeter-test.XXXXXX)
            "$D" --config "$C" --state-dir "$S" --wal-index-in "$disk" 2>&1 | sed "s|$disk|DISK|"
            rmdir "$disk"
            touch "$S/ifmeter.db-shm" "$RUN/other"
            mount --bind "$RUN/other" "$S/ifmeter.db-shm"
            "$D" --config "$C" --state-dir "$S" --wal-index-in "$RUN"
            umount "$S/ifmeter.db-shm"
            rm "$S/ifmeter.db-shm"
            ln -s /etc/passwd "$S/ifmeter.db-shm"
            "$D" --config "$C" --state-dir "$S" --wal-index-in "$RUN" || echo "exit $?"
            "$D" --config "$C" --state-dir "$S" --wal-index-out "$RUN" || echo "exit $?"
            rm "$S/ifmeter.db-shm"
            touch "$S/elsewhere"
            ln "$S/elsewhere" "$S/ifmeter.db-shm"
            "$D" --config "$C" --state-dir "$S" --wal-index-in "$RUN" || echo "exit $?"
            "$D" --config "$C" --state-dir "$S/missing" --wal-index-in "$RUN" || echo "exit $?"
            "$D" --config "$C" --state-dir "$S" --wal-index-in run || echo "exit $?"
            "$D" --config "$C" --state-dir "$S" --once --wal-index-in "$RUN" || echo "exit $?"
            """)
        #expect(result.standardOutput == """
            ifmeterd: WAL index \(state)/ifmeter.db-shm left on disk: DISK is not a tmpfs
            exit 74
            exit 74
            exit 66
            exit 64
            exit 64

            """)
        #expect(result.standardError == """
            ifmeterd: WAL index \(state)/ifmeter.db-shm left as it is: something else is mounted there
            ifmeterd: WAL index not moved to \(daemon.directory.path)/run: \(state)/ifmeter.db-shm: open: Too many levels of symbolic links
            ifmeterd: WAL index \(state)/ifmeter.db-shm was not bound: nothing to undo
            ifmeterd: WAL index not moved to \(daemon.directory.path)/run: \(state)/ifmeter.db-shm: open: not a regular file of its own
            ifmeterd: WAL index not moved to \(daemon.directory.path)/run: \(state)/missing: open: No such file or directory
            ifmeterd: --wal-index-in run: expected an absolute path (see 'ifmeterd --help')
            ifmeterd: --wal-index-in runs alone: only --config and --state-dir go with it (see 'ifmeterd --help')

            """)
    }
}
