/// Values keyed by ifindex, in ascending ifindex order: the order the kernel dumps links in, so a
/// pass looking up with a `Cursor` reads the table front to back, not at random (bench/TRIES.md).
/// Links come and go a few at a time, so moving the tail on insert costs less than the order saves.
public struct IfindexTable<Value> {
    /// Ascending, no duplicates; `values[i]` belongs to `keys[i]`.
    @inlinable public var keys: [Int32] { storedKeys }
    @inlinable public var values: [Value] { storedValues }

    // Inlinable so other modules' sample passes specialize it instead of going through witness tables; public,
    // not package: Swift 6.3 gives other modules no body of an @inlinable package declaration.
    @usableFromInline var storedKeys: [Int32] = []
    @usableFromInline var storedValues: [Value] = []

    @inlinable public init() {}

    /// The pairs as a table; of equal ifindexes the first wins.
    @inlinable public init(firstOf pairs: some Sequence<(Int32, Value)>) {
        var entries = Array(pairs.enumerated())
        // By ifindex, then by position: the first of equal ifindexes leads.
        if !entries.indices.dropFirst().allSatisfy({ entries[$0 - 1].element.0 < entries[$0].element.0 }) {
            entries.sort { ($0.element.0, $0.offset) < ($1.element.0, $1.offset) }
        }
        storedKeys.reserveCapacity(entries.count)
        storedValues.reserveCapacity(entries.count)
        for (_, (ifindex, value)) in entries where storedKeys.last != ifindex {
            storedKeys.append(ifindex)
            storedValues.append(value)
        }
    }

    @inlinable public var count: Int { storedKeys.count }
    @inlinable public var isEmpty: Bool { storedKeys.isEmpty }

    /// The value for `ifindex`, nil if none; setting nil removes it.
    @inlinable public subscript(ifindex: Int32) -> Value? {
        get {
            let found = search(ifindex)
            return found.present ? storedValues[found.slot] : nil
        }
        set {
            let found = search(ifindex)
            switch (found.present, newValue) {
            case (true, let value?): storedValues[found.slot] = value
            case (true, nil):
                storedKeys.remove(at: found.slot)
                storedValues.remove(at: found.slot)
            case (false, let value?):
                storedKeys.insert(ifindex, at: found.slot)
                storedValues.insert(value, at: found.slot)
            case (false, nil): break
            }
        }
    }

    /// Where an ascending pass looks first: the slot after the last one found.
    public struct Cursor {
        @usableFromInline var next = 0
        @inlinable public init() {}
    }

    /// The slot holding `ifindex`, if any, looked for at `cursor` first.
    @inlinable public func slot(of ifindex: Int32, from cursor: inout Cursor) -> Int? {
        let slot: Int
        if cursor.next < storedKeys.count, storedKeys[cursor.next] == ifindex {
            slot = cursor.next
        } else {
            let found = search(ifindex)
            guard found.present else {
                cursor.next = found.slot
                return nil
            }
            slot = found.slot
        }
        cursor.next = slot + 1
        return slot
    }

    /// The value at `slot` (from `slot(of:from:)`, no insert or removal since).
    @inlinable public subscript(slot slot: Int) -> Value {
        get { storedValues[slot] }
        set { storedValues[slot] = newValue }
    }

    @inlinable public mutating func removeAll(where shouldRemove: (Int32, Value) -> Bool) {
        var kept = 0
        for slot in storedKeys.indices where !shouldRemove(storedKeys[slot], storedValues[slot]) {
            if kept != slot {
                storedKeys[kept] = storedKeys[slot]
                storedValues[kept] = storedValues[slot]
            }
            kept += 1
        }
        storedKeys.removeLast(storedKeys.count - kept)
        storedValues.removeLast(storedValues.count - kept)
    }

    /// Binary search: the slot of `ifindex`, or where it would go.
    @inlinable func search(_ ifindex: Int32) -> (slot: Int, present: Bool) {
        var low = 0
        var high = storedKeys.count
        while low < high {
            let middle = (low + high) / 2
            if storedKeys[middle] < ifindex { low = middle + 1 } else { high = middle }
        }
        return (low, low < storedKeys.count && storedKeys[low] == ifindex)
    }
}

extension IfindexTable: Sequence {
    public struct Iterator: IteratorProtocol {
        @usableFromInline let table: IfindexTable
        @usableFromInline var slot = 0

        @inlinable init(table: IfindexTable) { self.table = table }

        @inlinable public mutating func next() -> (key: Int32, value: Value)? {
            guard slot < table.storedKeys.count else { return nil }
            defer { slot += 1 }
            return (table.storedKeys[slot], table.storedValues[slot])
        }
    }

    /// The entries in ascending ifindex order.
    @inlinable public func makeIterator() -> Iterator { Iterator(table: self) }

    @inlinable public var underestimatedCount: Int { count }
}

extension IfindexTable: ExpressibleByDictionaryLiteral {
    /// As a dictionary literal, a repeated ifindex is a programmer error.
    @inlinable public init(dictionaryLiteral elements: (Int32, Value)...) {
        self.init(firstOf: elements)
        precondition(count == elements.count, "IfindexTable literal with a repeated ifindex")
    }
}

extension IfindexTable: Equatable where Value: Equatable {}
extension IfindexTable: Sendable where Value: Sendable {}
