import Foundation
import IfmeterTestSupport
import Testing

extension TestEnvironment {
    static let rootReason: Comment = "needs root: creates network namespaces, tun and veth devices"
}

/// Debian's node_exporter with only the textfile collector, on loopback,
/// scraped once: what Prometheus would read from `directory`.
func scrapeTextfiles(in directory: String) throws -> String {
    // In a namespace of its own: its loopback port is nobody else's.
    let namespace = try NetworkNamespace()
    let exporter = Process()
    exporter.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    exporter.arguments = ["ip", "netns", "exec", namespace.name, "/usr/bin/prometheus-node-exporter",
                          "--collector.disable-defaults", "--collector.textfile", "--collector.textfile.directory=\(directory)",
                          "--web.listen-address=127.0.0.1:9100"]
    exporter.standardError = FileHandle.nullDevice
    try exporter.run()
    defer { exporter.terminate(); exporter.waitUntilExit() }
    for _ in 0..<200 {
        let result = try namespace.run(["/usr/bin/curl", "-sf", "http://127.0.0.1:9100/metrics"])
        if result.status == 0 { return result.standardOutput }
        usleep(50_000)
    }
    return ""
}
