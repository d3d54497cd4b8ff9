import Foundation
import Glibc
import Testing

/// Facts about where the tests run, and small process helpers.
enum TestEnvironment {
    /// Kernel tests create network namespaces and tun devices: root only.
    static let isRoot = geteuid() == 0
    static let rootReason: Comment = "needs root: creates network namespaces, tun and veth devices"

    /// The directory holding the built executables (beside the test bundle).
    static let binaries: URL = {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return executable.deletingLastPathComponent()
    }()

    static func binary(_ name: String) -> String { binaries.appendingPathComponent(name).path }

    /// A fresh directory under /tmp, removed by the caller when done.
    static func temporaryDirectory(_ label: String = "ifmeter-test") throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(label)-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

/// The outcome of a finished process.
struct ProcessResult {
    var status: Int32
    var standardOutput: String
    var standardError: String
}

/// Runs a program to completion, capturing its output.
@discardableResult
func runProcess(_ executable: String, _ arguments: [String], environment: [String: String]? = nil, input: String? = nil) throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    let output = Pipe()
    let error = Pipe()
    process.standardOutput = output
    process.standardError = error
    let inputPipe = Pipe()
    process.standardInput = inputPipe
    try process.run()
    if let input { inputPipe.fileHandleForWriting.write(Data(input.utf8)) }
    try inputPipe.fileHandleForWriting.close()
    // Both pipes are read at once, before waiting: a child that fills one
    // while we block on the other would never finish.
    nonisolated(unsafe) var errorData = Data()
    let errorRead = DispatchSemaphore(value: 0)
    DispatchQueue.global().async {
        errorData = error.fileHandleForReading.readDataToEndOfFile()
        errorRead.signal()
    }
    let outputData = output.fileHandleForReading.readDataToEndOfFile()
    errorRead.wait()
    process.waitUntilExit()
    return ProcessResult(
        status: process.terminationStatus,
        standardOutput: String(decoding: outputData, as: UTF8.self),
        standardError: String(decoding: errorData, as: UTF8.self))
}

/// Runs a program that must succeed; fails the test with its stderr otherwise.
@discardableResult
func mustRun(_ executable: String, _ arguments: [String], input: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
    let result = try runProcess(executable, arguments, input: input)
    if result.status != 0 {
        Issue.record("\(executable) \(arguments.joined(separator: " ")) exited \(result.status): \(result.standardError)", sourceLocation: sourceLocation)
        throw CancellationError()
    }
    return result.standardOutput
}

/// A JSON number as UInt64; UInt64.max when absent, so a comparison with an
/// expected value fails visibly. (Comparing Optional<UInt64> inside #expect
/// trips AddressSanitizer in a compiler-generated thunk of Swift 6.3.)
func number(_ value: Any?) -> UInt64 {
    (value as? NSNumber)?.uint64Value ?? .max
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
