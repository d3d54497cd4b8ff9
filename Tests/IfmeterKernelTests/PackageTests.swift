import Foundation
import Glibc
import IfmeterTestSupport
import Testing

/// The package under test and whether systemd can boot here.
enum PackageUnderTest {
    static let path = ProcessInfo.processInfo.environment["IFMETER_DEB"]
    static let systemdScript = DistributionTests.checkout.appendingPathComponent("Tests/systemd/run.sh").path
    /// Why the real-systemd test cannot run here, or nil.
    static let cannotBootSystemd: String? = {
        guard let result = try? runProcess("/bin/bash", [systemdScript, "--check"]) else { return "cannot run Tests/systemd/run.sh" }
        return result.status == 0 ? nil : result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }()
}

/// The Debian package `make test` builds (`make deb`), as lintian and dpkg
/// judge it, and installed under a real systemd (Tests/systemd/run.sh).
@Suite(.enabled(if: PackageUnderTest.path != nil, "needs the package: make test builds it (make deb) and names it in IFMETER_DEB"))
struct PackageTests {
    var deb: String { PackageUnderTest.path ?? "" }

    func field(_ name: String) throws -> String {
        try mustRun("/usr/bin/dpkg-deb", ["-f", deb, name]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func lintianFindsNoError() throws {
        #expect(FileManager.default.fileExists(atPath: deb), "IFMETER_DEB=\(deb) does not exist")
        let result = try runProcess("/usr/bin/lintian", ["--fail-on", "error", deb])
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        #expect(!result.standardOutput.split(separator: "\n").contains { $0.hasPrefix("E:") }, "\(result.standardOutput)")
    }

    /// Depends names the Debian packages of the libraries the binaries link,
    /// and the Swift runtime is inside the binaries.
    @Test func dependsComesFromTheLinkedLibraries() throws {
        let depends = try field("Depends")
        for package in ["libc6", "libnl-3-200", "libnl-route-3-200", "libsqlite3-0"] {
            #expect(depends.contains(package), "Depends: \(depends)")
        }
        // sd_notify is ifmeter's own (CKernel/notify.c).
        #expect(!depends.contains("libsystemd"), "Depends: \(depends)")
        #expect(!depends.lowercased().contains("swift"))
        let directory = try TestEnvironment.temporaryDirectory("deb")
        defer { try? FileManager.default.removeItem(at: directory) }
        try mustRun("/usr/bin/dpkg-deb", ["-x", deb, directory.path])
        for binary in ["usr/sbin/ifmeterd", "usr/bin/ifmeter"] {
            let needed = try mustRun("/usr/bin/readelf", ["-d", directory.appendingPathComponent(binary).path])
            #expect(needed.contains("libnl-route-3.so"))
            #expect(!needed.contains("libswift"), "\(binary) links the Swift runtime dynamically")
        }
        let version = try mustRun(directory.appendingPathComponent("usr/bin/ifmeter").path, ["--version"])
        #expect(try field("Version").hasPrefix(version.split(separator: " ").last!.trimmingCharacters(in: .whitespacesAndNewlines) + "-"))
    }

    @Test func everyFileIsWhereDebianLooks() throws {
        let listing = try mustRun("/usr/bin/dpkg-deb", ["-c", deb])
        for path in [
            "./usr/sbin/ifmeterd", "./usr/bin/ifmeter", "./lib/systemd/system/ifmeterd.service", "./lib/systemd/system/ifmeterd.socket",
            "./usr/lib/sysusers.d/ifmeter.conf",
            "./etc/ifmeter/ifmeter.conf", "./usr/share/man/man1/ifmeter.1.gz", "./usr/share/man/man5/ifmeter.conf.5.gz",
            "./usr/share/man/man8/ifmeterd.8.gz", "./usr/share/bash-completion/completions/ifmeter",
            "./usr/share/zsh/vendor-completions/_ifmeter", "./usr/share/fish/vendor_completions.d/ifmeter.fish",
            "./usr/share/doc/ifmeter/copyright", "./usr/share/doc/ifmeter/changelog.Debian.gz",
            "./usr/share/doc/ifmeter/docs/ACCOUNTING.md", "./usr/share/doc/ifmeter/docs/SECURITY.md",
            "./lib/systemd/system/ifmeter-metrics.service",
            "./var/lib/prometheus/node-exporter/ifmeter.prom -> /run/ifmeter-metrics/ifmeter.prom",
        ] {
            #expect(listing.contains(" \(path)\n"), "\(path) missing from the package")
        }
        let control = try TestEnvironment.temporaryDirectory("control")
        defer { try? FileManager.default.removeItem(at: control) }
        try mustRun("/usr/bin/dpkg-deb", ["-e", deb, control.path])
        #expect(try String(contentsOf: control.appendingPathComponent("conffiles"), encoding: .utf8) == "/etc/ifmeter/ifmeter.conf\n")
    }

    /// Install, reload (MetricsFile= too), stop, watchdog, kill -9, the CLI
    /// as nobody (the daemon's view), node_exporter's scrape of the relay's copy, upgrade, remove and purge, each checked by the
    /// script, which prints one "ok" line per step and cleans up after itself.
    @Test(.enabled(if: PackageUnderTest.cannotBootSystemd == nil, Comment(rawValue: PackageUnderTest.cannotBootSystemd ?? "")))
    func underARealSystemd() throws {
        let result = try runProcess("/bin/bash", [PackageUnderTest.systemdScript, deb, TestEnvironment.binary("ifmeter-testnet")])
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        #expect(result.standardOutput.contains("ok - powered off"), "\(result.standardOutput)")
        #expect(!result.standardOutput.contains("not ok"), "\(result.standardOutput)")
    }
}
