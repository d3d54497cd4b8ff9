@testable import IfmeterCore

/// Row and page counts of a store, for tests that check what it keeps.
extension CounterStore {
    func rowCount(_ table: String) throws -> Int64 {
        try database.query("SELECT count(*) FROM \(table)") { $0.integer(0) }.first ?? -1
    }

    func pageCount() throws -> Int64 {
        try database.query("PRAGMA page_count") { $0.integer(0) }.first ?? -1
    }
}
