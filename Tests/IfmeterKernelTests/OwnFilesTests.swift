import Foundation
import Glibc
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// What the daemon writes besides its store (the metrics file, the
/// journal) and what `graph --svg` writes, named where they must not go:
/// the kernel's files, or the configuration in use. Refused before
/// anything is written, in one line naming the path.
@Suite(.enabled(if: TestEnvironment.isRoot, TestEnvironment.rootReason))
struct OwnFilesTests {
    /// `MetricsFile=` in /dev, /proc or /sys, also reached through a
    /// symlinked directory: the start is refused (exit 78), nothing written
    /// there. /dev/shm is a place for files.
    @Test(arguments: ["MetricsFile="])
    func anOutputInTheKernelsFilesIsRefused(_ key: String) throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.runOnce()
        let alias = "/sys/class/net/lo/ifalias"
        let aliasBefore = try daemon.namespace.exec(["cat", alias])
        let throughLink = daemon.directory.appendingPathComponent("net-lo").path
        #expect(symlink("/sys/class/net/lo", throughLink) == 0)
        let inDev = "/dev/ifmeter-test-\(getpid()).out"
        defer { unlink(inDev) }
        for (path, root) in [(alias, "/sys"), (throughLink + "/ifalias", "/sys"), ("/proc/ifmeter.out", "/proc"), (inDev, "/dev")] {
            try daemon.writeConfiguration("\(key)\(path)\n")
            let result = try daemon.runOnceAllowingFailure()
            #expect(result.status == ExitCode.config.rawValue, "\(path): \(result.standardError)")
            #expect(result.standardError == "ifmeterd: \(key)\(path): in \(root), among the kernel's files; choose a file of its own elsewhere\n", "\(path)")
        }
        #expect(try daemon.namespace.exec(["cat", alias]) == aliasBefore)
        #expect(!FileSystem.exists(inDev))
        let shared = "/dev/shm/ifmeter-test-\(getpid()).out"
        defer { unlink(shared) }
        try daemon.writeConfiguration("\(key)\(shared)\n")
        try daemon.runOnce()
    }

    /// An atomic write (the metrics file, `graph --svg`) whose directory
    /// resolves into /dev, directly or through a symbolic link, writes
    /// nothing there: judged on the directory it opened.
    @Test func anAtomicWriteIntoTheKernelsFilesWritesNothing() throws {
        let scratch = try TestEnvironment.temporaryDirectory("atomic-dev")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let throughLink = scratch.appendingPathComponent("dev").path
        #expect(symlink("/dev", throughLink) == 0)
        for (path, created) in [
            ("/dev/ifmeter-test-\(getpid()).prom", "/dev/ifmeter-test-\(getpid()).prom"),
            (throughLink + "/ifmeter-test-\(getpid())-link.prom", "/dev/ifmeter-test-\(getpid())-link.prom"),
        ] {
            defer { unlink(created) }
            #expect {
                try FileSystem.writeAtomically(Array("x\n".utf8), to: path, synced: false)
            } throws: { error in
                "\(error)" == "\(path): replace: in /dev, among the kernel's files; nothing written there"
            }
            #expect(!FileSystem.exists(created))
        }
    }

    /// The configuration file in use, named as the metrics file (by another
    /// spelling: the same file, not the same text): the start is refused
    /// (exit 78) and the file kept.
    @Test(arguments: ["MetricsFile=", "--metrics-file"])
    func anOutputNamingTheConfigurationIsRefused(_ setting: String) throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.runOnce()
        let spelt = daemon.directory.path + "/./" + "ifmeter.conf"
        var extra: [String] = []
        if setting.hasSuffix("=") { try daemon.writeConfiguration("\(setting)\(spelt)\n") } else { extra = [setting, spelt] }
        let before = try FileSystem.readBytes(daemon.configPath)
        let result = try daemon.runOnceAllowingFailure(extra: extra)
        let key = setting.hasSuffix("=") ? setting : "MetricsFile="
        #expect(result.status == ExitCode.config.rawValue, "\(result.standardError)")
        #expect(result.standardError == "ifmeterd: \(key)\(spelt): the same file as \(daemon.configPath); choose a file of its own\n")
        #expect(try FileSystem.readBytes(daemon.configPath) == before)
        try daemon.writeConfiguration("")
        try daemon.runOnce()
    }

    /// `graph --svg` naming the configuration in use (another spelling of
    /// it): one line, exit 73, the file kept.
    @Test func graphOntoTheConfigurationIsRefused() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace())
        try daemon.runOnce()
        let spelt = daemon.directory.path + "//ifmeter.conf"
        let before = try FileSystem.readBytes(daemon.configPath)
        let result = try daemon.namespace.run([TestEnvironment.binary("ifmeter"), "--state-dir", daemon.stateDirectory, "--config", daemon.configPath,
                                               "graph", "--svg", spelt])
        #expect(result.status == ExitCode.cannotCreate.rawValue, "\(result.standardError)")
        #expect(result.standardError == "ifmeter: \(spelt): replace: the configuration file in use (\(daemon.configPath)), left untouched; choose a file of its own\n")
        #expect(try FileSystem.readBytes(daemon.configPath) == before)
    }
}
