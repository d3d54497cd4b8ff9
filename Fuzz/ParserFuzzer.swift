// libFuzzer entry point for the configuration and command parsers, built
// by `make fuzz` straight from their sources with -sanitize=fuzzer,address.
// Every input must parse or fail with a located ConfigurationError; nothing
// may crash, hang or trip the sanitizer. New inputs libFuzzer finds land in
// Tests/IfmeterKernelTests/Corpus/config and run in `make test` from then on.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    do {
        _ = try ConfigurationFile.parse(text, path: "fuzz.conf")
    } catch {
        // Typed: a ConfigurationError is the only thing parse can throw.
        let lines = ConfigurationFile.lines(of: text).count
        precondition(error.line.map { (1...lines).contains($0) } ?? false, "error line out of range: \(error)")
        precondition(!error.description.contains("\n"), "multi-line error: \(error)")
    }
    // The same bytes as a command line: ifmeter's own parser must return a
    // command or a one-line usage error; ifmeterd's words go through Arguments.
    let words = text.split(whereSeparator: { $0 == "\n" || $0 == " " }).map(String.init)
    do {
        _ = try CommandParser.parse(words)
    } catch {
        precondition(!error.message.isEmpty && !error.message.contains("\n"), "bad usage error: \(error)")
    }
    var arguments = Arguments(words)
    _ = arguments.flag("--once")
    _ = try? arguments.option("--config")
    _ = try? arguments.option("--interval")
    _ = try? arguments.finish()
    return 0
}
