import Foundation
import Glibc

/// Facts about where the tests run, and small process helpers.
package enum TestEnvironment {
    /// Kernel tests create network namespaces and tun devices: root only.
    package static let isRoot = geteuid() == 0

    /// The directory holding the built executables (beside the test bundle).
    package static let binaries: URL = {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return executable.deletingLastPathComponent()
    }()

    package static func binary(_ name: String) -> String { binaries.appendingPathComponent(name).path }

    /// A fresh directory under /tmp, removed by the caller when done.
    package static func temporaryDirectory(_ label: String = "ifmeter-test") throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(label)-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

/// The outcome of a finished process.
package struct ProcessResult {
    package var status: Int32
    package var standardOutput: String
    package var standardError: String

    package init(status: Int32, standardOutput: String, standardError: String) {
        self.status = status
        self.standardOutput = standardOutput
        self.standardError = standardError
    }
}

/// Runs a program to completion, capturing its output.
@discardableResult
package func runProcess(_ executable: String, _ arguments: [String], environment: [String: String]? = nil, input: String? = nil) throws -> ProcessResult {
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

/// A JSON number as UInt64; UInt64.max when absent, so a comparison with an
/// expected value fails visibly. (Comparing Optional<UInt64> inside #expect
/// trips AddressSanitizer in a compiler-generated thunk of Swift 6.3.)
package func number(_ value: Any?) -> UInt64 {
    (value as? NSNumber)?.uint64Value ?? .max
}

/// A program that exited other than 0, with what it said.
package struct ProcessFailure: Error, CustomStringConvertible {
    package var description: String
}

/// Runs a program that must succeed; throws what it said on stderr otherwise.
@discardableResult
package func mustRun(_ executable: String, _ arguments: [String], input: String? = nil) throws -> String {
    let result = try runProcess(executable, arguments, input: input)
    guard result.status == 0 else {
        throw ProcessFailure(description: "\(executable) \(arguments.joined(separator: " ")) exited \(result.status): \(result.standardError)")
    }
    return result.standardOutput
}
