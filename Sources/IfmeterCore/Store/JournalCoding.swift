/// The journal's byte format: little-endian fixed-width numbers, strings as
/// a 32-bit length and their UTF-8, counts before lists. Written and read
/// only by this file, so the two sides cannot drift apart.
struct ByteWriter {
    private(set) var bytes: [UInt8] = []

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func u32(_ value: UInt32) { littleEndian(value) }
    mutating func u64(_ value: UInt64) { littleEndian(value) }

    private mutating func littleEndian<T: FixedWidthInteger>(_ value: T) {
        for shift in stride(from: 0, to: T.bitWidth, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) }
    }
    mutating func i32(_ value: Int32) { u32(UInt32(bitPattern: value)) }
    mutating func i64(_ value: Int64) { u64(UInt64(bitPattern: value)) }
    mutating func f64(_ value: Double) { u64(value.bitPattern) }
    mutating func count(_ value: Int) { u32(UInt32(value)) }
    mutating func bytes(_ other: [UInt8]) { bytes += other }

    mutating func string(_ value: String) {
        count(value.utf8.count)
        bytes += value.utf8
    }

    mutating func optional<T>(_ value: T?, _ write: (inout ByteWriter, T) -> Void) {
        guard let value else { return u8(0) }
        u8(1)
        write(&self, value)
    }
}

/// Reads what `ByteWriter` wrote, refusing anything that runs past the end
/// or claims more elements than bytes are left (a damaged or hostile file
/// must not make it allocate at will).
struct ByteReader {
    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    private let bytes: [UInt8]
    private(set) var offset: Int
    private let end: Int

    init(_ bytes: [UInt8], from start: Int = 0, to end: Int? = nil) {
        self.bytes = bytes
        offset = start
        self.end = end ?? bytes.count
    }

    var isAtEnd: Bool { offset == end }
    var remaining: Int { end - offset }

    mutating func u8() throws(Malformed) -> UInt8 {
        guard offset < end else { throw Malformed(description: "ends inside a field") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func u32() throws(Malformed) -> UInt32 { try littleEndian() }
    mutating func u64() throws(Malformed) -> UInt64 { try littleEndian() }

    private mutating func littleEndian<T: FixedWidthInteger>() throws(Malformed) -> T {
        let size = T.bitWidth / 8
        guard remaining >= size else { throw Malformed(description: "ends inside a field") }
        var value: T = 0
        for index in 0..<size { value |= T(bytes[offset + index]) << (8 * index) }
        offset += size
        return value
    }

    mutating func i32() throws(Malformed) -> Int32 { Int32(bitPattern: try u32()) }
    mutating func i64() throws(Malformed) -> Int64 { Int64(bitPattern: try u64()) }
    mutating func f64() throws(Malformed) -> Double { Double(bitPattern: try u64()) }

    /// A count of elements, each at least `minimumSize` bytes long.
    mutating func count(minimumSize: Int = 1) throws(Malformed) -> Int {
        let value = Int(try u32())
        guard value <= remaining / max(minimumSize, 1) else { throw Malformed(description: "claims \(value) elements in \(remaining) bytes") }
        return value
    }

    mutating func string() throws(Malformed) -> String {
        let length = try count()
        defer { offset += length }
        return String(decoding: bytes[offset..<offset + length], as: UTF8.self)
    }

    mutating func optional<T>(_ read: (inout ByteReader) throws(Malformed) -> T) throws(Malformed) -> T? {
        switch try u8() {
        case 0: return nil
        case 1: return try read(&self)
        case let flag: throw Malformed(description: "optional flag \(flag)")
        }
    }

    /// An enum's raw value, refused when no case has it.
    mutating func member<T: RawRepresentable>(_: T.Type) throws(Malformed) -> T where T.RawValue == String {
        let raw = try string()
        guard let value = T(rawValue: raw) else { throw Malformed(description: "unknown \(T.self) \"\(raw)\"") }
        return value
    }
}

// MARK: The commit batch, field by field

extension ByteWriter {
    /// In `LinkCounters.fields` order, without that array: under link churn
    /// the daemon encodes a record for every burst of events, and these
    /// were an allocation each (callgrind, `ifmeter-bench meter-churn 300`:
    /// encoding its 1,934 lives, 47.6 -> 44.4 million instructions).
    mutating func counters(_ value: LinkCounters) {
        u64(value.rxBytes); u64(value.txBytes); u64(value.rxPackets); u64(value.txPackets)
        u64(value.rxErrors); u64(value.txErrors); u64(value.rxDropped); u64(value.txDropped)
    }

    mutating func life(_ value: TrackedLife) {
        i32(value.ifindex)
        string(value.name)
        counters(value.counters)
        f64(value.sinceBoot)
        i64(value.firstSeen)
        i64(value.lastSeen)
    }

    mutating func event(_ value: ResetEvent) {
        string(value.reason.rawValue)
        string(value.name)
        optional(value.oldIfindex) { $0.i32($1) }
        optional(value.newIfindex) { $0.i32($1) }
        switch value.loss {
        case .none: u8(0)
        case .unknown: u8(1)
        case .discarded(let rx, let tx):
            u8(2)
            u64(rx)
            u64(tx)
        case .unseen(let seconds):
            u8(3)
            u64(seconds)
        }
        string(value.detail)
    }

    mutating func links(_ value: [Int32: String]) {
        count(value.count)
        for (ifindex, name) in value.sorted(by: { $0.key < $1.key }) {
            i32(ifindex)
            string(name)
        }
    }

    mutating func batch(_ value: CommitBatch) {
        let pending = value.pending
        // Dictionaries in a fixed order: the same batch is the same bytes.
        count(pending.deltas.count)
        for (slot, delta) in pending.deltas.sorted(by: { ($0.key.name, $0.key.start) < ($1.key.name, $1.key.start) }) {
            string(slot.name)
            i64(slot.start)
            counters(delta)
        }
        count(pending.interfaces.count)
        for (name, info) in pending.interfaces.sorted(by: { $0.key < $1.key }) {
            string(name)
            string(info.interfaceClass.rawValue)
            string(info.signal)
            string(info.kind)
        }
        count(pending.events.count)
        for (time, resetEvent) in pending.events {
            i64(time)
            event(resetEvent)
        }
        count(pending.endedLives.count)
        for (ended, time) in pending.endedLives {
            life(ended.life)
            string(ended.end.rawValue)
            string(ended.bootID)
            u64(ended.namespace)
            i64(time)
        }
        count(value.changedLives.count)
        for changed in value.changedLives { life(changed) }
        // The change, not the whole record: a link coming and going beside
        // a hundred others writes one entry.
        optional(value.presence) { writer, presence in
            writer.u8(presence.replacesAll ? 1 : 0)
            writer.links(presence.added)
            writer.count(presence.removed.count)
            for ifindex in presence.removed { writer.i32(ifindex) }
        }
    }
}

// Reading refuses every value the store's own readers would refuse
// (StoreQueries.swift): applying a record must never leave a store the
// daemon then declines to open.
extension ByteReader {
    /// Unix seconds in the store's range.
    mutating func time() throws(Malformed) -> Int64 {
        let value = try i64()
        guard CounterStore.timeRange.contains(value) else { throw Malformed(description: "time \(value) out of range") }
        return value
    }

    /// Seconds on the boot clock: finite.
    mutating func secondsSinceBoot() throws(Malformed) -> Double {
        let value = try f64()
        guard value.isFinite, value.magnitude < 1e12 else { throw Malformed(description: "\(value) is not a time since boot") }
        return value
    }

    /// What a commit adds to totals: never beyond the headroom the store keeps.
    mutating func delta() throws(Malformed) -> LinkCounters {
        let value = try counters()
        guard value.fields.allSatisfy({ $0 <= UInt64(CounterStore.counterLimit) }) else { throw Malformed(description: "a delta beyond 2^62") }
        return value
    }

    mutating func counters() throws(Malformed) -> LinkCounters {
        var fields: [UInt64] = []
        for _ in 0..<8 { fields.append(try u64()) }
        return LinkCounters(fields: fields)
    }

    mutating func life() throws(Malformed) -> TrackedLife {
        TrackedLife(
            ifindex: try i32(), name: try string(), counters: try counters(), sinceBoot: try secondsSinceBoot(), firstSeen: try time(),
            lastSeen: try time())
    }

    mutating func event() throws(Malformed) -> ResetEvent {
        let reason = try member(ResetEvent.Reason.self)
        let name = try string()
        let old = try optional { (reader) throws(Malformed) in try reader.i32() }
        let new = try optional { (reader) throws(Malformed) in try reader.i32() }
        let loss: ResetEvent.Loss
        switch try u8() {
        case 0: loss = .none
        case 1: loss = .unknown
        case 2: loss = .discarded(rxBytes: try u64(), txBytes: try u64())
        case 3: loss = .unseen(seconds: try u64())
        case let tag: throw Malformed(description: "loss \(tag)")
        }
        return ResetEvent(reason, name: name, old: old, new: new, loss: loss, detail: try string())
    }

    mutating func links() throws(Malformed) -> [Int32: String] {
        var links: [Int32: String] = [:]
        for _ in 0..<(try count(minimumSize: 8)) { links[try i32()] = try string() }
        return links
    }

    mutating func batch() throws(Malformed) -> CommitBatch {
        var pending = PendingWrites()
        for _ in 0..<(try count(minimumSize: 76)) {
            let slot = PendingWrites.Slot(name: try string(), start: try time())
            pending.deltas[slot, default: .zero] += try delta()
        }
        for _ in 0..<(try count(minimumSize: 16)) {
            let name = try string()
            pending.interfaces[name] = InterfaceInfo(interfaceClass: try member(InterfaceClass.self), signal: try string(), kind: try string())
        }
        for _ in 0..<(try count(minimumSize: 23)) {
            pending.events.append((try time(), try event()))
        }
        for _ in 0..<(try count(minimumSize: 120)) {
            let ended = EndedLife(life: try life(), end: try member(LifeEnd.self), bootID: try string(), namespace: try u64())
            pending.endedLives.append((ended, try time()))
        }
        var changedLives: [TrackedLife] = []
        for _ in 0..<(try count(minimumSize: 96)) { changedLives.append(try life()) }
        let presence = try optional { (reader) throws(Malformed) in
            let replacesAll: Bool
            switch try reader.u8() {
            case 0: replacesAll = false
            case 1: replacesAll = true
            case let flag: throw Malformed(description: "presence flag \(flag)")
            }
            let added = try reader.links()
            var removed: [Int32] = []
            for _ in 0..<(try reader.count(minimumSize: 4)) { removed.append(try reader.i32()) }
            return PresenceUpdate(added: added, removed: removed, replacesAll: replacesAll)
        }
        return CommitBatch(pending: pending, changedLives: changedLives, presence: presence)
    }
}
