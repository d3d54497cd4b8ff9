/// A count and its noun, read as English: "1 watched interface",
/// "0 watched interfaces". `plural` for nouns that do not take an "s".
package func counted(_ count: Int, _ singular: String, plural: String? = nil) -> String {
    "\(count) \(count == 1 ? singular : plural ?? singular + "s")"
}
