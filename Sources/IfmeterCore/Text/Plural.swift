/// A count and its noun, read as English: "1 watched interface", "0 watched interfaces".
package func counted(_ count: Int, _ singular: String) -> String {
    "\(count) \(count == 1 ? singular : singular + "s")"
}
