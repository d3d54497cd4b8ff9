import IfmeterTestSupport
import Testing
@testable import IfmeterCore

@Suite struct IfindexTableTests {
    static let builds: [(pairs: [(Int32, String)], expected: [(Int32, String)])] = [
        ([], []),
        ([(1, "a"), (2, "b"), (3, "c")], [(1, "a"), (2, "b"), (3, "c")]),
        ([(3, "c"), (1, "a"), (2, "b")], [(1, "a"), (2, "b"), (3, "c")]),
        // Of equal ifindexes the first wins, in order or not.
        ([(1, "a"), (1, "b"), (2, "c")], [(1, "a"), (2, "c")]),
        ([(5, "x"), (2, "b"), (5, "y"), (2, "z")], [(2, "b"), (5, "x")]),
        ([(Int32.max, "max"), (Int32.min, "min"), (0, "zero")], [(Int32.min, "min"), (0, "zero"), (Int32.max, "max")]),
    ]

    @Test(arguments: builds)
    func buildsInIfindexOrderFirstWins(_ build: (pairs: [(Int32, String)], expected: [(Int32, String)])) {
        let table = IfindexTable(firstOf: build.pairs)
        #expect(table.keys == build.expected.map(\.0))
        #expect(table.values == build.expected.map(\.1))
        #expect(Array(table.map(\.key)) == build.expected.map(\.0))
    }

    /// Random inserts, replacements, removals and cursor passes against a
    /// dictionary holding the same entries.
    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func answersAsADictionaryWould(seed: UInt64) {
        var random = SplitMix(seed: seed)
        var table = IfindexTable<Int>()
        var model: [Int32: Int] = [:]
        for step in 0..<3_000 {
            let ifindex = Int32(random.next() % 64)
            switch random.next() % 7 {
            case 0, 1:
                table[ifindex] = step
                model[ifindex] = step
            case 2:
                table[ifindex] = nil
                model[ifindex] = nil
            case 3:
                let limit = Int(random.next() % 3_000)
                table.removeAll { _, value in value < limit }
                model = model.filter { $0.value >= limit }
            case 4:
                // A pass that inserts and removes as it goes (as a dump pass
                // begins lives): a cursor left stale only costs a search.
                var cursor = IfindexTable<Int>.Cursor()
                for key in (0..<Int32(64)).filter({ _ in random.next() % 3 != 0 }) {
                    let slot = table.slot(of: key, from: &cursor)
                    #expect(slot.map { table[slot: $0] } == model[key])
                    let other = Int32(random.next() % 64)
                    if random.next() % 2 == 0 {
                        table[other] = step
                        model[other] = step
                    } else {
                        table[other] = nil
                        model[other] = nil
                    }
                }
            default:
                // A pass in ascending order, with gaps and misses, then one
                // in any order: the cursor only ever saves work.
                let ascending = (0..<Int32(64)).filter { _ in random.next() % 3 != 0 }
                for order in [ascending, ascending.shuffled(using: &random)] {
                    var cursor = IfindexTable<Int>.Cursor()
                    for key in order {
                        let slot = table.slot(of: key, from: &cursor)
                        #expect(slot.map { table[slot: $0] } == model[key])
                    }
                }
            }
            #expect(table[ifindex] == model[ifindex])
        }
        #expect(table.keys == model.keys.sorted())
        #expect(table.count == model.count)
        for (key, value) in table { #expect(model[key] == value) }
    }

    @Test func slotsAreWritableInPlace() {
        var table: IfindexTable<String> = [7: "a", 3: "b"]
        var cursor = IfindexTable<String>.Cursor()
        let slot = table.slot(of: 7, from: &cursor)
        #expect(slot == 1)
        if let slot { table[slot: slot] = "c" }
        #expect(table == [3: "b", 7: "c"])
        #expect(table.slot(of: 5, from: &cursor) == nil)
    }
}
