// libFuzzer entry point for the configuration and argument parsers, built
// by `make fuzz` straight from their sources with -sanitize=fuzzer,address.
// Every input must parse or fail with a located ConfigurationError; nothing
// may crash, hang or trip the sanitizer. New inputs libFuzzer finds land in
// Tests/IfmeterCoreTests/Corpus/config and run in `make test` from then on.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    do {
        _ = try ConfigurationFile.parse(text, path: "fuzz.conf")
    } catch let error as ConfigurationError {
        let lines = ConfigurationFile.lines(of: text).count
        precondition(error.line.map { (1...lines).contains($0) } ?? false, "error line out of range: \(error)")
        precondition(!error.description.contains("\n"), "multi-line error: \(error)")
    } catch {
        preconditionFailure("unexpected error type: \(error)")
    }
    var arguments = Arguments(text.split(whereSeparator: { $0 == "\n" || $0 == " " }).map(String.init))
    _ = arguments.flag("--all")
    _ = try? arguments.option("--config")
    _ = try? arguments.option("--limit")
    _ = arguments.popPositional()
    _ = try? arguments.finish()
    return 0
}
