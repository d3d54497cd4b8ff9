import Foundation
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// The commit journal without root: its bytes read back as they were
/// written, a crash mid-write and damage are told apart, and the store
/// applies a journal exactly once, to the store it was written for.
@Suite struct CommitJournalTests {
    let directory: URL
    var journalPath: String { directory.appendingPathComponent("ifmeterd.journal").path }

    init() throws { directory = try TestEnvironment.temporaryDirectory("journal") }

    /// A batch with every field the format has, and names a file must carry
    /// unchanged: empty, non-ASCII, quotes, a newline, 4 KiB.
    static func batch(_ seed: Int64) -> CommitBatch {
        let names = ["tun\(seed)", "", "wwan0 \"x\"\n", "ü-∆-🚀", String(repeating: "a", count: 4096)]
        var pending = PendingWrites()
        for (index, name) in names.enumerated() {
            pending.deltas[PendingWrites.Slot(name: name, start: 1_700_000_100 + Int64(index) * 300)] =
                LinkCounters(fields: (0..<8).map { UInt64($0) &* 0x0101_0101_0101 &+ UInt64(seed) &+ (index == 0 ? 1 << 61 : 0) })
        }
        pending.interfaces[names[2]] = InterfaceInfo(interfaceClass: .cellular, signal: "wwan devtype", kind: "")
        pending.interfaces[names[3]] = InterfaceInfo(interfaceClass: .tunnel, signal: "kind wireguard", kind: "wireguard")
        let losses: [ResetEvent.Loss] = [.none, .unknown, .discarded(rxBytes: .max, txBytes: 0)]
        for (index, loss) in losses.enumerated() {
            pending.events.append((1_700_000_000 + Int64(index), ResetEvent(
                ResetEvent.Reason.allCases[(Int(seed) + index) % ResetEvent.Reason.allCases.count], name: names[index],
                old: index == 0 ? nil : Int32(index), new: index == 1 ? nil : -Int32(index), loss: loss, detail: "detail \(names[index])")))
        }
        let life = TrackedLife(
            ifindex: Int32(seed), name: names[3], counters: LinkCounters(rxBytes: .max, txBytes: 1), sinceBoot: -12.25, firstSeen: 0, lastSeen: 1 << 40)
        for end in LifeEnd.allCases {
            pending.endedLives.append((EndedLife(life: life, end: end, bootID: "boot \(end)", namespace: .max), 1_700_000_200))
        }
        return CommitBatch(
            pending: pending, changedLives: [life, TrackedLife(ifindex: .min, name: "", counters: .zero, sinceBoot: 0, firstSeen: 0, lastSeen: 0)],
            presence: seed.isMultiple(of: 2) ? PresenceUpdate(present: [1: "lo", 7: names[3]], previous: seed == 0 ? nil : [1: "lo", 9: "gone"]) : nil)
    }

    /// The bytes a record is made of, to compare batches whose lists of
    /// tuples are not Equatable.
    static func encoded(_ record: JournalRecord) -> [UInt8] {
        var writer = ByteWriter()
        writer.i64(record.time)
        writer.batch(record.batch)
        return writer.bytes
    }

    static let header = JournalHeader(storeID: 0xDEAD_BEEF, generation: 7, bootID: "boot-1", namespace: 4096)

    private func writeJournal(_ records: [JournalRecord], header: JournalHeader = Self.header) throws -> [UInt8] {
        let journal = try CommitJournal(path: journalPath, header: header)
        for record in records { try journal.append(record) }
        #expect(journal.records.count == records.count)
        return try #require(try FileSystem.readBytes(journalPath))
    }

    @Test func recordsReadBackAsTheyWereWritten() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let records = (0..<4).map { JournalRecord(time: 1_700_000_000 + $0, batch: Self.batch($0)) }
        _ = try writeJournal(records)
        let contents = try #require(try CommitJournal.read(journalPath))
        #expect(contents.header == Self.header)
        #expect(contents.ending == .whole)
        #expect(contents.records.map(Self.encoded) == records.map(Self.encoded))
        #expect(contents.records[0].batch.presence?.replacesAll == true)
        #expect(contents.records[0].batch.presence?.added == [1: "lo", 7: "ü-∆-🚀"])
        #expect(contents.records[1].batch.presence == nil)
        #expect(contents.records[2].batch.presence?.replacesAll == false)
        #expect(contents.records[2].batch.presence?.added == [7: "ü-∆-🚀"])
        #expect(contents.records[2].batch.presence?.removed == [9])
        #expect(contents.records[3].batch.pending.deltas == records[3].batch.pending.deltas)
        #expect(contents.records[3].batch.pending.interfaces == records[3].batch.pending.interfaces)
        #expect(contents.records[3].batch.changedLives == records[3].batch.changedLives)
    }

    /// The records a daemon keeps for its next store commit are what a
    /// restarted one would read back: a presence change, not a copy of
    /// every link present (under link churn, one per record).
    @Test func recordsKeptInMemoryAreWhatTheFileReadsBack() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let journal = try CommitJournal(path: journalPath, header: Self.header)
        let records = (0..<4).map { JournalRecord(time: 1_700_000_000 + $0, batch: Self.batch($0)) }
        for record in records { try journal.append(record) }
        let contents = try #require(try CommitJournal.read(journalPath))
        #expect(journal.records.map(\.batch.presence) == contents.records.map(\.batch.presence))
        #expect(journal.records[2].batch.presence?.present == [7: "ü-∆-🚀"])
        #expect(journal.records.map(Self.encoded) == records.map(Self.encoded))
    }

    @Test func aNewGenerationStartsEmpty() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let journal = try CommitJournal(path: journalPath, header: Self.header)
        try journal.append(JournalRecord(time: 1, batch: Self.batch(1)))
        try journal.startGeneration(8)
        #expect(journal.records.isEmpty)
        let contents = try #require(try CommitJournal.read(journalPath))
        #expect(contents.header.generation == 8)
        #expect(contents.records.isEmpty)
        #expect(journal.size == (try FileSystem.readBytes(journalPath))?.count)
    }

    /// A kill while the last record was being written leaves it short: the
    /// records before it are read, and it is not damage.
    @Test func aRecordCutShortAtAnyByteEndsTheReadingQuietly() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let records = (0..<3).map { JournalRecord(time: $0, batch: Self.batch($0)) }
        let whole = try writeJournal(records)
        let lastStart = whole.count - (Self.encoded(records[2]).count + 8)
        for cut in lastStart..<whole.count {
            let contents = try CommitJournal.parse(Array(whole[..<cut]), path: journalPath)
            #expect(contents.records.count == 2)
            if cut == lastStart { #expect(contents.ending == .whole) } else { #expect(contents.ending.isCutShort) }
        }
    }

    /// A flipped bit anywhere in a record ends the reading there; inside
    /// the file it is damage (the file is kept aside), in the last record a
    /// write torn by a power cut.
    @Test(arguments: [0, 1])
    func aDamagedRecordEndsTheReading(_ damagedRecord: Int) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let records = (0..<2).map { JournalRecord(time: $0, batch: Self.batch($0)) }
        var bytes = try writeJournal(records)
        let recordStart = bytes.count - records[damagedRecord...].map { Self.encoded($0).count + 8 }.reduce(0, +)
        bytes[recordStart + 20] ^= 0x10
        let contents = try CommitJournal.parse(bytes, path: journalPath)
        #expect(contents.records.count == damagedRecord)
        #expect(contents.ending.text.contains("checksum"))
        #expect(contents.ending.isCutShort == (damagedRecord == 1))
    }

    /// A flipped bit in a record's length that makes it point past the end
    /// of the file is damage, not a record cut short: the record is whole
    /// under its checksum, and the records after it are there. The last
    /// record's length is damaged the same way.
    @Test(arguments: [0, 1, 2])
    func aDamagedLengthIsNotACutShortRecord(_ damagedRecord: Int) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let records = (0..<3).map { JournalRecord(time: $0, batch: Self.batch($0)) }
        var bytes = try writeJournal(records)
        let recordStart = bytes.count - records[damagedRecord...].map { Self.encoded($0).count + 8 }.reduce(0, +)
        bytes[recordStart + 2] ^= 0x40  // the length's third byte: 4 MiB more
        let contents = try CommitJournal.parse(bytes, path: journalPath)
        #expect(contents.records.count == damagedRecord)
        #expect(!contents.ending.isCutShort)
        #expect(contents.ending.text.contains("length is damaged"), "\(contents.ending.text)")
    }

    static let notJournals: [(expected: String, bytes: [UInt8])] = [
        ("not an ifmeter journal", Array("SQLite format 3\0".utf8) + [UInt8](repeating: 0, count: 64)),
        ("not an ifmeter journal", Array("ifmeter journ".utf8)),
        ("journal format 2", CommitJournal.magic + [2, 0, 0, 0]),
        ("journal header damaged", CommitJournal.magic + [1, 0, 0, 0, 200, 0, 0, 0]),
        ("journal header damaged", CommitJournal.magic + [1, 0, 0, 0]),
    ]

    @Test(arguments: Self.notJournals)
    func aFileThatIsNotAJournalIsRefused(_ expected: String, _ bytes: [UInt8]) throws {
        #expect {
            _ = try CommitJournal.parse(bytes, path: "/run/ifmeter/ifmeterd.journal")
        } throws: { error in
            let message = "\(error)"
            return message.hasPrefix("/run/ifmeter/ifmeterd.journal: ") && message.contains(expected)
        }
    }

    /// A record claiming more elements than it has bytes is refused before
    /// anything is allocated for them.
    @Test func aRecordClaimingHugeCountsIsMalformed() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        var payload = ByteWriter()
        payload.i64(1)
        payload.u32(.max)
        var frame = ByteWriter()
        frame.count(payload.bytes.count)
        frame.u32(CRC32.checksum(payload.bytes[...]))
        frame.bytes(payload.bytes)
        let bytes = try writeJournal([]) + frame.bytes
        let contents = try CommitJournal.parse(bytes, path: journalPath)
        #expect(contents.records.isEmpty)
        #expect(contents.ending.text.contains("malformed"))
        #expect(!contents.ending.isCutShort)
    }

    /// Values no daemon writes and the store's readers refuse: refused
    /// here, so applying a journal never leaves a store the daemon declines.
    @Test(arguments: [("time", 0), ("time", 1), ("since boot", 2), ("delta", 3)])
    func aRecordWithAValueTheStoreRefusesIsMalformed(_ what: String, _ variant: Int) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        var batch = Self.batch(1)
        var record = JournalRecord(time: 1_700_000_000, batch: batch)
        switch variant {
        case 0: record.time = -1
        case 1: batch.changedLives[0].lastSeen = (1 << 40) + 1
        case 2: batch.changedLives[0].sinceBoot = .infinity
        default: batch.pending.deltas[PendingWrites.Slot(name: "x", start: 0)] = LinkCounters(rxBytes: (1 << 62) + 1)
        }
        if variant > 0 { record.batch = batch }
        let contents = try CommitJournal.parse(try writeJournal([record]), path: journalPath)
        #expect(contents.records.isEmpty)
        #expect(contents.ending.text.contains("malformed"), "\(what)")
    }

    /// After a power cut a file can end in zeros where records were going.
    @Test func aTailOfZerosIsNotDamage() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let records = (0..<2).map { JournalRecord(time: $0, batch: Self.batch($0)) }
        let bytes = try writeJournal(records) + [UInt8](repeating: 0, count: 4096)
        let contents = try CommitJournal.parse(bytes, path: journalPath)
        #expect(contents.records.count == 2)
        #expect(contents.ending.isCutShort)
        #expect(contents.ending.text.contains("zeros"))
    }

    /// A journal filled as the daemon fills it (appending while below its
    /// bound) reads back whole: a larger one would be refused at the next start.
    @Test func aJournalFilledToItsBoundReadsBack() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let journal = try CommitJournal(path: journalPath, header: JournalHeader(storeID: 1, generation: 1, bootID: "b", namespace: 0))
        // A burst of a thousand tunnel lives, one record.
        let lives = (0..<1000).map { TrackedLife(ifindex: Int32($0), name: "tun\($0)", counters: .zero, sinceBoot: 0, firstSeen: 0, lastSeen: 0) }
        let record = JournalRecord(time: 1, batch: CommitBatch(changedLives: lives))
        while journal.size < LifeChangeRoute.journalBound { try journal.append(record) }
        #expect(try CommitJournal.read(journalPath)?.records.count == journal.records.count)
    }

    @Test func checksumIsZlibsCRC32() {
        #expect(CRC32.checksum(Array("123456789".utf8)[...]) == 0xCBF4_3926)
        #expect(CRC32.checksum([][...]) == 0)
    }

    // MARK: Applying

    /// A tunnel life begun and ended, journaled as the daemon does.
    private func tunnelLife(ifindex: Int32, bytes: UInt64) -> [JournalRecord] {
        let begun = TrackedLife(ifindex: ifindex, name: "vpn0", counters: .zero, sinceBoot: 10, firstSeen: 1_700_000_000, lastSeen: 1_700_000_000)
        var start = PendingWrites()
        start.interfaces["vpn0"] = InterfaceInfo(interfaceClass: .tunnel, signal: "kind tun", kind: "tun")
        var ended = begun
        ended.counters = LinkCounters(rxBytes: bytes, txBytes: bytes / 2)
        ended.lastSeen = 1_700_000_004
        var end = PendingWrites()
        var outcome = AccountingOutcome()
        outcome.deltas = [Delta(name: "vpn0", ifindex: ifindex, counters: ended.counters)]
        outcome.events = [ResetEvent(.removed, name: "vpn0", old: ifindex, new: nil, loss: .none, detail: "deleted")]
        outcome.endedLives = [EndedLife(life: ended, end: .removed, bootID: "boot-1", namespace: 4096)]
        end.record(outcome, at: Instant(wall: 1_700_000_004, sinceBoot: 14))
        return [
            JournalRecord(time: 1_700_000_000, batch: CommitBatch(pending: start, changedLives: [begun])),
            JournalRecord(time: 1_700_000_004, batch: CommitBatch(pending: end)),
        ]
    }

    private func journalFor(_ store: CounterStore, generation: UInt64, records: [JournalRecord]) throws -> JournalContents {
        let header = JournalHeader(storeID: try store.journalIdentity(), generation: generation, bootID: "boot-1", namespace: 4096)
        _ = try writeJournal(records, header: header)
        return try #require(try CommitJournal.read(journalPath))
    }

    /// A daemon killed after its store commit but before the journal
    /// started over: the records are in the store once, never twice.
    @Test func aJournalIsAppliedOnceToItsOwnStore() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try CounterStore(directory: directory.path)
        let contents = try journalFor(store, generation: 1, records: tunnelLife(ifindex: 9, bytes: 300_000))
        #expect(try store.apply(contents, retention: Retention(), intervals: (15, 300)) == .applied(2))
        #expect(try store.apply(contents, retention: Retention(), intervals: (15, 300)) == .nothing)
        #expect(try store.appliedJournalGeneration() == 1)
        let vpn = try #require(try store.interfaces().first { $0.name == "vpn0" })
        #expect(vpn.totals.rxBytes == 300_000)
        #expect(vpn.totals.txBytes == 150_000)
        #expect(vpn.interfaceClass == .tunnel)
        #expect(try store.events().map(\.reason) == [.removed])
        #expect(try store.loadState().openLives.isEmpty)

        var foreign = contents
        foreign.header.storeID &+= 1
        foreign.header.generation = 2
        #expect(try store.apply(foreign, retention: Retention(), intervals: (15, 300)) == .foreign)
        #expect(try store.interfaces().first { $0.name == "vpn0" }?.totals.rxBytes == 300_000)
    }

    /// Every row of the tables a commit writes, ids replaced by names, so
    /// stores whose rows were created in another order compare.
    private func rows(_ store: CounterStore) throws -> [String: [String]] {
        let counters = ["rx_bytes", "tx_bytes", "rx_packets", "tx_packets"]
        let tables: [String: (columns: [String], from: String)] = [
            "interface": (["name", "class", "signal", "kind", "first_seen", "last_seen", "rx_errors", "tx_dropped", "basis", "incomplete"] + counters, "interface"),
            "bucket": (["i.name", "granularity", "start", "b.basis", "b.incomplete"] + counters.map { "b.\($0)" }, "bucket b JOIN interface i ON i.id = b.interface_id"),
            "boot_total": (["boot_id", "i.name"] + counters.map { "b.\($0)" }, "boot_total b JOIN interface i ON i.id = b.interface_id"),
            "life": (["i.name", "boot_id", "ifindex", "l.name", "l.first_seen", "l.last_seen", "since_boot", "netns", "ended", "end_reason", "counted_rx_bytes"]
                     + counters.map { "l.\($0)" }, "life l JOIN interface i ON i.id = l.interface_id"),
            "event": (["time", "i.name", "reason", "old_ifindex", "new_ifindex", "loss", "discarded_rx_bytes", "detail"], "event e JOIN interface i ON i.id = e.interface_id"),
            "present_link": (["ifindex", "name"], "present_link"),
        ]
        return try tables.mapValues { table in
            let row = table.columns.map { "quote(\($0))" }.joined(separator: " || '|' || ")
            return try store.database.query("SELECT \(row) FROM \(table.from)") { $0.text(0) }.sorted()
        }
    }

    /// Two new stores given `records`: one a commit per record, the other
    /// one commit of them all.
    private func committedBothWays(_ records: [JournalRecord]) throws -> (perRecord: CounterStore, atOnce: CounterStore) {
        for name in ["a", "b"] { try FileManager.default.createDirectory(at: directory.appendingPathComponent(name), withIntermediateDirectories: true) }
        let perRecord = try CounterStore(directory: directory.appendingPathComponent("a").path)
        let atOnce = try CounterStore(directory: directory.appendingPathComponent("b").path)
        for record in records {
            try perRecord.commit([record], bootID: "boot-1", namespace: 4096, retention: Retention(), intervals: (15, 300))
        }
        try atOnce.commit(records, bootID: "boot-1", namespace: 4096, retention: Retention(), intervals: (15, 300))
        return (perRecord, atOnce)
    }

    /// A commit applies a journal's records with their deltas summed per
    /// interface and slot: the store it leaves is row for row the one a
    /// commit per record leaves. Three lives of one name, one across a
    /// five-minute boundary, a long life counted in every record, a name
    /// counted without a life, an event with a loss, links coming and going.
    @Test func aJournalAppliedAtOnceLeavesTheRowsOfACommitPerRecord() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let start: Int64 = 1_700_000_100   // a five-minute boundary
        let wwan = InterfaceInfo(interfaceClass: .cellular, signal: "wwan devtype", kind: "")
        var modem = TrackedLife(ifindex: 3, name: "wwan0", counters: .zero, sinceBoot: 5, firstSeen: start, lastSeen: start)
        var records: [JournalRecord] = []
        for (index, (begin, end)) in [(10, 40), (200, 420), (500, 530)].enumerated() {
            let ifindex = Int32(20 + index)
            let tunnel = TrackedLife(ifindex: ifindex, name: "vpn0", counters: .zero, sinceBoot: Double(begin), firstSeen: start + Int64(begin), lastSeen: start + Int64(begin))
            var begun = PendingWrites()
            begun.interfaces["vpn0"] = InterfaceInfo(interfaceClass: .tunnel, signal: "kind tun", kind: "tun")
            if index == 0 { begun.interfaces["wwan0"] = wwan }
            modem.counters += LinkCounters(rxBytes: 1000, txBytes: 10)
            modem.lastSeen = start + Int64(begin)
            var outcome = AccountingOutcome()
            // And a name counted without a life or a class of its own.
            outcome.deltas = [Delta(name: "wwan0", ifindex: 3, counters: LinkCounters(rxBytes: 1000, txBytes: 10)),
                              Delta(name: "renamed", ifindex: 3, counters: LinkCounters(rxBytes: 1, txBytes: 1))]
            begun.record(outcome, at: Instant(wall: start + Int64(begin), sinceBoot: Double(begin)))
            records.append(JournalRecord(time: start + Int64(begin), batch: CommitBatch(
                pending: begun, changedLives: [tunnel, modem],
                presence: PresenceUpdate(present: [3: "wwan0", ifindex: "vpn0"], previous: index == 0 ? nil : [3: "wwan0"]))))
            for (wall, bytes) in [(begin + 5, UInt64(700)), (end, UInt64(300 + index))] {
                var ended = tunnel
                ended.counters = LinkCounters(rxBytes: bytes, txBytes: bytes / 2)
                ended.lastSeen = start + Int64(wall)
                var pending = PendingWrites()
                var outcome = AccountingOutcome()
                outcome.deltas = [Delta(name: "vpn0", ifindex: ifindex, counters: ended.counters)]
                if wall == end {
                    outcome.endedLives = [EndedLife(life: ended, end: .removed, bootID: "boot-1", namespace: 4096)]
                    outcome.events = [ResetEvent(index == 1 ? .eventsLost : .removed, name: "vpn0", old: ifindex, new: nil, loss: index == 1 ? .unknown : .none, detail: "gone")]
                }
                pending.record(outcome, at: Instant(wall: start + Int64(wall), sinceBoot: Double(wall)))
                records.append(JournalRecord(time: start + Int64(wall), batch: CommitBatch(
                    pending: pending, changedLives: wall == end ? [] : [ended],
                    presence: wall == end ? PresenceUpdate(present: [3: "wwan0"], previous: [3: "wwan0", ifindex: "vpn0"]) : nil)))
            }
        }
        let (perRecord, atOnce) = try committedBothWays(records)
        let expected = try rows(perRecord)
        #expect(try rows(atOnce) == expected)
        // The test means something: both lives' bytes, in two slots.
        #expect(expected["bucket"]?.filter { $0.hasPrefix("'vpn0'|'5min'") }.count == 2)
        #expect(try atOnce.interface(named: "vpn0")?.totals.rxBytes == 700 * 3 + 300 + 301 + 302)
    }

    /// Lives that come, carry bytes, change names and go, under a few names
    /// (some reusing an ifindex), one record per burst as under link churn:
    /// the store a commit of them all leaves is the one a commit per record
    /// leaves, though it writes rows a later record overwrote only once.
    @Test(arguments: 1...6 as ClosedRange<UInt64>)
    func aChurningJournalAppliedAtOnceLeavesTheRowsOfACommitPerRecord(seed: UInt64) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        var random = SplitMix(seed: seed)
        let infos = [InterfaceInfo(interfaceClass: .tunnel, signal: "kind tun", kind: "tun"),
                     InterfaceInfo(interfaceClass: .cellular, signal: "wwan devtype", kind: "")]
        let names = ["vpn0", "vpn1", "wwan0", "tun-x"]
        var open: [Int32: TrackedLife] = [:]
        var ended: [Int32] = []
        var nextIfindex: Int32 = 10
        var time: Int64 = 1_700_000_100
        var records: [JournalRecord] = []
        for index in 0..<80 {
            time += Int64.random(in: 0...40, using: &random)
            var pending = PendingWrites()
            var changed: [TrackedLife] = []
            var added: [Int32: String] = [:]
            var removed: [Int32] = []
            var outcome = AccountingOutcome()
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let ifindexes = open.keys.sorted()
                switch Int.random(in: 0..<10, using: &random) {
                case 0...2 where open.count < 5, _ where open.isEmpty:
                    // A life begins, on a fresh ifindex or one a life ended on.
                    var ifindex = nextIfindex
                    if let reused = ended.randomElement(using: &random), Bool.random(using: &random) {
                        ifindex = reused
                    } else {
                        nextIfindex += 1
                    }
                    guard open[ifindex] == nil, !removed.contains(ifindex) else { continue }
                    ended.removeAll { $0 == ifindex }
                    // Now and then a name the store has not seen, with no
                    // class of its own yet: its row is the life's to insert.
                    let unknown = Int.random(in: 0..<8, using: &random) == 0
                    let name = unknown ? "new\(index)" : names.randomElement(using: &random)!
                    let life = TrackedLife(ifindex: ifindex, name: name, counters: .zero, sinceBoot: Double(time - 1_700_000_000), firstSeen: time, lastSeen: time)
                    open[ifindex] = life
                    if !unknown { pending.interfaces[name] = infos[Int.random(in: 0...(index % 7 == 0 ? 1 : 0), using: &random)] }
                    changed.removeAll { $0.ifindex == ifindex }
                    changed.append(life)
                    added[ifindex] = name
                case 3...6:
                    // Traffic, sometimes under a new name.
                    let ifindex = ifindexes.randomElement(using: &random)!
                    var life = open[ifindex]!
                    let bytes = LinkCounters(rxBytes: UInt64.random(in: 1...5000, using: &random), txBytes: 7)
                    life.counters += bytes
                    life.lastSeen = time
                    if Int.random(in: 0..<6, using: &random) == 0 {
                        life.name = names.randomElement(using: &random)!
                        pending.interfaces[life.name] = infos[0]
                        added[ifindex] = life.name
                    }
                    open[ifindex] = life
                    outcome.deltas.append(Delta(name: life.name, ifindex: ifindex, counters: bytes))
                    changed.removeAll { $0.ifindex == ifindex }
                    changed.append(life)
                default:
                    // A life ends.
                    let ifindex = ifindexes.randomElement(using: &random)!
                    guard !changed.contains(where: { $0.ifindex == ifindex }) else { continue }
                    var life = open.removeValue(forKey: ifindex)!
                    life.lastSeen = time
                    outcome.endedLives.append(EndedLife(life: life, end: .removed, bootID: "boot-1", namespace: 4096))
                    // Some with a loss, which marks the name's rows incomplete.
                    let lost = Int.random(in: 0..<5, using: &random) == 0
                    outcome.events.append(ResetEvent(
                        lost ? .eventsLost : .removed, name: life.name, old: ifindex, new: nil, loss: lost ? .unknown : .none, detail: "deleted"))
                    ended.append(ifindex)
                    added[ifindex] = nil
                    removed.append(ifindex)
                }
            }
            if index == 1 {
                // A life of the boot before, on an ifindex this boot's lives use.
                let earlier = TrackedLife(ifindex: 10, name: "vpn0", counters: .zero, sinceBoot: 5, firstSeen: time - 90_000, lastSeen: time - 86_000)
                outcome.endedLives.append(EndedLife(life: earlier, end: .reboot, bootID: "boot-0", namespace: 4096))
            }
            pending.record(outcome, at: Instant(wall: time, sinceBoot: Double(time - 1_700_000_000)))
            var presence: PresenceUpdate? = added.isEmpty && removed.isEmpty ? nil : PresenceUpdate(added: added, removed: removed, replacesAll: false)
            if index == 0 || index == 41 {
                presence = PresenceUpdate(added: open.mapValues(\.name), removed: [], replacesAll: true)
            }
            records.append(JournalRecord(time: time, batch: CommitBatch(pending: pending, changedLives: changed, presence: presence)))
        }
        let (perRecord, atOnce) = try committedBothWays(records)
        let expected = try rows(perRecord)
        #expect(try rows(atOnce) == expected)
        // The test means something: lives ended, lives still open, the
        // presence of both, and rows the commit at once left out.
        #expect(expected["life"]?.contains { $0.contains("'removed'") } == true)
        #expect(expected["life"]?.contains { $0.contains("|NULL|NULL|") } == true)
        #expect(expected["present_link"]?.isEmpty == false)
        #expect(expected["interface"]?.contains { $0.hasPrefix("'new") } == true)
        #expect(expected["life"]?.contains { $0.contains("'boot-0'") } == true)
        #expect(expected["bucket"]?.contains { $0.contains("'events-lost at") } == true)
        #expect(atOnce.database.rowsChanged < perRecord.database.rowsChanged * 3 / 4)
    }

    /// A tunnel life under `name` that begins at `time`, counted at once.
    private func lifeBegun(_ name: String, ifindex: Int32, at time: Int64, bytes: UInt64) -> JournalRecord {
        let life = TrackedLife(ifindex: ifindex, name: name, counters: LinkCounters(rxBytes: bytes, txBytes: 1), sinceBoot: 10, firstSeen: time, lastSeen: time)
        var pending = PendingWrites()
        pending.interfaces[name] = InterfaceInfo(interfaceClass: .tunnel, signal: "kind tun", kind: "tun")
        var outcome = AccountingOutcome()
        outcome.deltas = [Delta(name: name, ifindex: ifindex, counters: life.counters)]
        pending.record(outcome, at: Instant(wall: time, sinceBoot: 10))
        return JournalRecord(time: time, batch: CommitBatch(pending: pending, changedLives: [life]))
    }

    /// The hourly prune falls between two records of a journal: a name gone
    /// past the retirement age is retired there, before a later record
    /// counts it again under a row of its own, as a commit per record does.
    @Test func aJournalAppliedAtOnceRetiresWhereACommitPerRecordWould() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let start: Int64 = 1_767_225_600
        var stores: [CounterStore] = []
        for name in ["a", "b"] {
            try FileManager.default.createDirectory(at: directory.appendingPathComponent(name), withIntermediateDirectories: true)
            let store = try CounterStore(directory: directory.appendingPathComponent(name).path)
            var old = lifeBegun("tun-old", ifindex: 7, at: start, bytes: 5000)
            var outcome = AccountingOutcome()
            var ended = old.batch.changedLives[0]
            ended.lastSeen = start + 60
            outcome.endedLives = [EndedLife(life: ended, end: .removed, bootID: "boot-0", namespace: 0)]
            old.batch.pending.record(outcome, at: Instant(wall: start + 60, sinceBoot: 70))
            old.batch.changedLives = []
            try store.commit([old], bootID: "boot-0", namespace: 0, retention: Retention(), intervals: (15, 300))
            stores.append(store)
        }
        let later = start + 100 * 86_400
        let records = [lifeBegun("wwan0", ifindex: 3, at: later, bytes: 100), lifeBegun("tun-old", ifindex: 9, at: later + 30, bytes: 200)]
        for record in records {
            try stores[0].commit([record], bootID: "boot-1", namespace: 0, retention: Retention(), intervals: (15, 300))
        }
        try stores[1].commit(records, bootID: "boot-1", namespace: 0, retention: Retention(), intervals: (15, 300))
        let expected = try rows(stores[0])
        #expect(try rows(stores[1]) == expected)
        #expect(expected["interface"]?.contains { $0.hasPrefix("'retired tunnel'") } == true)
        #expect(try stores[1].interface(named: "tun-old")?.totals.rxBytes == 200)
    }

    /// A journal damaged inside: readers apply the records before the
    /// damage and say where it stopped; a last record torn is no damage.
    @Test(arguments: [0, 1])
    func readersSayWhereADamagedJournalStopped(_ damagedRecord: Int) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let writer = try CounterStore(directory: directory.path)
        try writer.commit(PendingWrites(), openLives: [], bootID: "boot-1", at: 1_699_999_000, retention: Retention(), intervals: (15, 300))
        let records = tunnelLife(ifindex: 9, bytes: 300_000)
        _ = try journalFor(writer, generation: 1, records: records)
        var bytes = try #require(try FileSystem.readBytes(journalPath))
        let recordStart = bytes.count - records[damagedRecord...].map { Self.encoded($0).count + 8 }.reduce(0, +)
        bytes[recordStart + 20] ^= 0x10
        try Data(bytes).write(to: URL(fileURLWithPath: journalPath))
        let inclusion = try JournalOverlay(over: CounterStore(directory: directory.path, readOnly: true), journalAt: journalPath).inclusion
        #expect(inclusion.applied == damagedRecord)
        #expect((inclusion.damaged?.contains("record 1 fails its checksum") == true) == (damagedRecord == 0), "\(String(describing: inclusion.damaged))")
    }

    /// `ifmeter` sees what only the journal holds yet; the store file is
    /// not written, and a journal already applied adds nothing.
    @Test func readersSeeTheJournalWithoutWritingTheStore() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let writer = try CounterStore(directory: directory.path)
        try writer.commit(PendingWrites(), openLives: [], bootID: "boot-1", at: 1_699_999_000, retention: Retention(), intervals: (15, 300))
        _ = try journalFor(writer, generation: 1, records: tunnelLife(ifindex: 9, bytes: 300_000))

        let file = try CounterStore(directory: directory.path, readOnly: true)
        let reader = try JournalOverlay(over: file, journalAt: journalPath)
        #expect(reader.inclusion == JournalOverlay.Inclusion(applied: 2))
        #expect(try reader.store.interfaces().first { $0.name == "vpn0" }?.totals.rxBytes == 300_000)
        #expect(try file.interfaces().isEmpty)
        #expect(try CounterStore(directory: directory.path, readOnly: true).interfaces().isEmpty)

        // After the daemon's commit the journal starts its next generation:
        // the old one is never shown twice.
        let contents = try #require(try CommitJournal.read(journalPath))
        _ = try writer.apply(contents, retention: Retention(), intervals: (15, 300))
        let later = try JournalOverlay(over: CounterStore(directory: directory.path, readOnly: true), journalAt: journalPath)
        #expect(later.inclusion == JournalOverlay.Inclusion(applied: 0))
        #expect(try later.store.interfaces().first { $0.name == "vpn0" }?.totals.rxBytes == 300_000)
        #expect(try JournalOverlay(over: CounterStore(directory: directory.path, readOnly: true), journalAt: directory.path + "/none").inclusion == JournalOverlay.Inclusion(applied: 0))
    }
}

/// The journal with the real daemon and kernel: where `JournalFile=` puts
/// it, what a kill leaves there, and files at its path that are not its own.

extension JournalEnding {
    var isCutShort: Bool { if case .cutShort = self { true } else { false } }
    var text: String {
        switch self {
        case .whole: ""
        case .cutShort(let why), .damaged(let why): why
        }
    }
}
