// libFuzzer entry point over store contents, built by `make fuzz` from
// IfmeterCore's sources (all but the kernel, daemon and CLI files) with
// -sanitize=fuzzer,address. Each input overwrites chosen columns of a small
// store with hostile values (Tests/IfmeterKernelTests/Support/StoreFuzzHarness)
// and runs every reader and the daemon's start-up over it: a trap or a
// multi-line error is a finding. New inputs land in
// Tests/IfmeterKernelTests/Corpus/store and `make test` replays them.
import Glibc

nonisolated(unsafe) let fuzzDirectory: String = {
    var template = Array("/tmp/ifmeter-store-fuzz-XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let problems = StoreFuzzHarness.run(Array(UnsafeBufferPointer(start: data, count: min(size, 600))), directory: fuzzDirectory + "/s")
    precondition(problems.isEmpty, "\(problems)")
    return 0
}
