/// The interfaces a command shows: `-i NAME` repeated, and `-i a+b` for one merged row (vnStat's spelling).
package struct InterfaceSelection: Sendable, Hashable, ExpressibleByArrayLiteral {
    /// One entry per `-i`, each a list of members (one unless merged).
    package var groups: [[String]]

    package init(groups: [[String]]) { self.groups = groups }
    package init(arrayLiteral names: String...) { groups = names.map { [$0] } }

    /// Parses `-i` values; nil names the first malformed one (`a+`, `+`, empty).
    package static func parse(_ values: [String]) -> Result<InterfaceSelection, SelectionError> {
        var groups: [[String]] = []
        for value in values {
            guard !value.isEmpty else { return .failure(SelectionError(value: value)) }
            let parts = value.split(separator: "+", omittingEmptySubsequences: false).map(String.init)
            // A '+' at either end, or doubled, merges nothing: the value is one name with '+' in it (`+`, `x+`).
            let names = parts.contains(where: \.isEmpty) ? [value] : parts
            // Names typed by a person, in the encoded form the store keeps (InterfaceName).
            groups.append(names.map(InterfaceName.fromUser))
        }
        return .success(InterfaceSelection(groups: groups))
    }

    /// Linux allows `+` in a name: a value naming a known interface whole is that one, not a merge.
    package func resolvingNames(among known: some Collection<String>) -> InterfaceSelection {
        InterfaceSelection(groups: groups.map { group in
            let whole = group.joined(separator: "+")
            return group.count > 1 && known.contains(whole) ? [whole] : group
        })
    }

    /// A member named by its alias (`[Aliases]` `wwan0=phone`, `-i phone`) is that interface, unless
    /// a known interface has the name itself.
    package func resolvingAliases(_ aliases: [String: String], among known: some Collection<String>) -> InterfaceSelection {
        let byAlias = Dictionary(aliases.map { ($0.value, $0.key) }, uniquingKeysWith: { first, _ in first })
        return InterfaceSelection(groups: groups.map { group in group.map { known.contains($0) ? $0 : byAlias[$0] ?? $0 } })
    }

    /// Everything when no interface is named.
    package var isEmpty: Bool { groups.isEmpty }

    package var members: Set<String> { Set(groups.joined()) }

    package func contains(_ name: String) -> Bool { isEmpty || groups.contains { $0.contains(name) } }

    /// The first member that is not among the known names.
    package func unknown(among known: some Collection<String>) -> String? {
        groups.joined().first { !known.contains($0) }
    }

    /// The labels a name is shown under: itself, and every merge it is in.
    package func labels(of name: String) -> [String] {
        if isEmpty { return [name] }
        return groups.filter { $0.contains(name) }.map { $0.joined(separator: "+") }
    }

    /// Items relabelled by group and summed where a merge makes two share a key, the rest dropped, in order of first appearance.
    package func apply<Item, Key: Hashable>(
        _ items: [Item], name: KeyPath<Item, String>, relabel: (Item, String) -> Item, key: (Item) -> Key, combine: (Item, Item) -> Item
    ) -> [Item] {
        var result: [Item] = []
        var index: [Key: Int] = [:]
        for item in items {
            for label in labels(of: item[keyPath: name]) {
                let renamed = relabel(item, label)
                let k = key(renamed)
                if let at = index[k] {
                    result[at] = combine(result[at], renamed)
                } else {
                    index[k] = result.count
                    result.append(renamed)
                }
            }
        }
        return result
    }
}

package struct SelectionError: Error, Sendable, Hashable {
    package var value: String
}

extension InterfaceSelection {
    /// The class of a merged row: the members' when they agree, else "mixed".
    static func mergedClass(_ a: String, _ b: String) -> String { a == b ? a : "mixed" }
}
