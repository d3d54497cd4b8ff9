/// A command-line mistake: exit 64 with this line and a hint.
package struct UsageError: Error, Sendable, CustomStringConvertible {
    package var message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}

/// Command-line words consumed option by option; what is left after the known options is positional.
/// Parsing, validating and running are separate steps (argument-parser's discipline, without it).
package struct Arguments {
    private var words: [String]
    /// The options already taken: one left over was given twice.
    private var taken: Set<String> = []

    package init(_ words: some Sequence<String>) { self.words = Array(words) }

    /// Removes `name` wherever it stands; true when it was there.
    package mutating func flag(_ name: String) -> Bool {
        guard let index = words.firstIndex(of: name) else { return false }
        words.remove(at: index)
        taken.insert(name)
        return true
    }

    /// Removes `name VALUE` or `name=VALUE`; nil when absent. An empty value (a variable that expanded
    /// to nothing) is no value.
    package mutating func option(_ name: String) throws(UsageError) -> String? {
        for (index, word) in words.enumerated() {
            let value: String
            if word == name {
                guard index + 1 < words.count else { throw UsageError("\(name) needs a value") }
                value = words[index + 1]
                words.removeSubrange(index...index + 1)
            } else if word.hasPrefix(name + "=") {
                value = String(word.dropFirst(name.count + 1))
                words.remove(at: index)
            } else {
                continue
            }
            taken.insert(name)
            guard !value.isEmpty else { throw UsageError("\(name) needs a value, not an empty one") }
            return value
        }
        return nil
    }

    /// The first remaining word, when it is not an option.
    package mutating func popPositional() -> String? {
        guard let first = words.first, !first.hasPrefix("-") || first == "-" else { return nil }
        return words.removeFirst()
    }

    /// Fails on anything left over: unknown options or extra operands.
    package func finish() throws(UsageError) {
        if let extra = words.first {
            let name = extra.split(separator: "=", maxSplits: 1).first.map(String.init) ?? extra
            if taken.contains(name) { throw UsageError("\(name) given more than once") }
            throw UsageError(extra.hasPrefix("-") ? "unknown option \(extra)" : "unexpected argument \(extra)")
        }
    }

    package var isEmpty: Bool { words.isEmpty }
}
