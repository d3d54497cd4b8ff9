import Foundation
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// The daemon driven in-process through its `LinkSource` seam: the real
/// loop steps, store and journal, with the kernel's dump replaced by a table
/// (the kernel tests run the same against real links).
@Suite struct DaemonInProcessTests {
    final class TableLinkSource: LinkSource {
        var table: [LinkSample] = []
        func links() throws -> [LinkSample] { table }
    }

    let directory: URL

    init() throws { directory = try TestEnvironment.temporaryDirectory("in-process") }

    private func daemon(_ source: TableLinkSource) throws -> Daemon {
        var configuration = Configuration()
        configuration.commitInterval = 0
        configuration.sysfsRoot = directory.path + "/sys"
        return try Daemon(Daemon.Options(
            configuration: configuration, configurationPath: nil, stateDirectory: directory.path + "/state", environment: [:],
            once: true, linkSource: source))
    }

    private func tun(rx: UInt64) -> LinkSample {
        LinkSample(ifindex: 7, name: "tun0", kind: "tun", counters: LinkCounters(rxBytes: rx, txBytes: rx / 10))
    }

    /// First sight counts nothing before it (rule 5); traffic after it is
    /// counted to the byte; a counter that goes down is a reset counted
    /// from zero (rule 6), never a negative or phantom delta.
    @Test func samplesAreCountedByTheRulesAndCommitted() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = TableLinkSource()
        source.table = [tun(rx: 1000)]
        let daemon = try daemon(source)
        try daemon.start()
        source.table = [tun(rx: 5000)]
        daemon.samplePass()
        source.table = [tun(rx: 300)]
        daemon.samplePass()
        #expect(daemon.finishOnce() == .success)
        let store = try CounterStore(directory: directory.path + "/state", readOnly: true)
        let totals = try #require(try store.interfaces().first { $0.name == "tun0" }?.totals)
        #expect(totals.rxBytes == 4000 + 300)
        #expect(totals.txBytes == 400 + 30)
        #expect(try store.events().map(\.reason) == [.historyUnknown, .counterReset])
    }

    /// A link gone from the dump stays open until its deletion is read
    /// (its final counters come with it): nothing is counted or ended.
    @Test func aLinkMissingFromADumpIsLeftForItsDeletion() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = TableLinkSource()
        source.table = [tun(rx: 1000)]
        let daemon = try daemon(source)
        try daemon.start()
        source.table = []
        daemon.samplePass()
        #expect(daemon.finishOnce() == .success)
        let store = try CounterStore(directory: directory.path + "/state", readOnly: true)
        #expect(try store.events().map(\.reason) == [.historyUnknown])
        #expect(try store.rowCount("life WHERE ended IS NULL") == 1)
    }
}
