extension ConfigurationFile {
    /// A budget line's key and value: `cellular=20GB`, `wwan0=1GB per day rx`. The value is an amount, then
    /// optionally `per PERIOD` and a direction, in any order; without them, a cycle's rx + tx.
    static func budget(target typed: String, value: String) throws(Message) -> Budget {
        let target = try budgetTarget(typed)
        var words = value.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)[...]
        let amount = words.popFirst() ?? ""
        guard let bytes = byteAmount(amount), bytes > 0, let decimal = isDecimalAmount(amount) else {
            throw Message(text: "\(target.label)=\(quoted(value)): expected an amount like 20GB (1000-based) or 5GiB (1024-based)")
        }
        var budget = Budget(target: target.target, bytes: bytes, decimal: decimal)
        var period: BudgetPeriod?, direction: BudgetDirection?
        while let word = words.popFirst() {
            func fail(_ why: String) -> Message { Message(text: "\(target.label)=\(quoted(value)): \(why)") }
            if word == "per" {
                guard period == nil else { throw fail("per given twice") }
                guard let next = words.popFirst(), let chosen = BudgetPeriod(rawValue: next) else { throw fail("expected per \(periodChoices)") }
                period = chosen
            } else if let chosen = BudgetDirection(rawValue: word) {
                guard direction == nil else { throw fail("rx, tx or total given twice") }
                direction = chosen
            } else {
                throw fail("\(quoted(word)): expected per \(periodChoices), then rx, tx or total")
            }
        }
        budget.period = period ?? .cycle
        budget.direction = direction ?? .total
        return budget
    }

    static let periodChoices = "hour, day, month, cycle or year"

    /// A second budget of one target, period and direction would shadow the first.
    static func addBudget(_ budget: Budget, to configuration: inout Configuration) throws(Message) {
        let same = configuration.budgets.contains { $0.target == budget.target && $0.period == budget.period && $0.direction == budget.direction }
        guard !same else {
            let qualifier = budget.qualifier.isEmpty ? "" : " (\(budget.qualifier))"
            throw Message(text: "\(budget.label)=\(qualifier) set twice in [Budgets]")
        }
        configuration.budgets.append(budget)
    }

    /// What a budget names: a class (`cellular`) or an interface (`wwan0`), which may be budgeted before it is
    /// first seen; a key close to a class (`misspeltClass`) is a typo whose budget would never alarm.
    package static func budgetTarget(_ typed: String) throws(Message) -> (target: Budget.Target, label: String) {
        let target = InterfaceClass(rawValue: typed) != nil ? typed : InterfaceName.fromUser(typed)
        let interfaceClass = InterfaceClass(rawValue: target)
        if interfaceClass == nil, let meant = misspeltClass(typed) {
            throw Message(text: "\(quoted(typed))=: not a class; did you mean \(meant.rawValue)? (a key this close to a class names an interface only if it has a digit, like wwan0)")
        }
        guard interfaceClass != nil
            || ((InterfaceName.decode(target)?.count ?? .max) <= 15 && isValidGlob(target) && !target.contains(where: { "*?[".contains($0) }))
        else {
            throw Message(text: "\(quoted(target)): a budget names a class (\(InterfaceClass.allCases.map(\.rawValue).joined(separator: ", "))) or an interface")
        }
        return (interfaceClass.map { .interfaceClass($0) } ?? .interface(target), target)
    }

    /// The class a key that is not one was meant to be: five characters or more, no digit, within two
    /// edits of a class's name. Kernel names nearly always carry a digit (`wwan0`), and short ones
    /// (`wlan`) are too near everything to judge.
    package static func misspeltClass(_ key: String) -> InterfaceClass? {
        guard key.count >= 5, !key.contains(where: { $0.isASCII && $0.isNumber }) else { return nil }
        let typed = Array(key.lowercased())
        return InterfaceClass.allCases
            .filter { abs($0.rawValue.count - typed.count) <= 2 }
            .map { ($0, editDistance(typed, Array($0.rawValue))) }
            .filter { $0.1 <= 2 }
            .min { $0.1 < $1.1 }?.0
    }

    /// Whether an amount `byteAmount` accepts is in powers of 1000 (`5MB`, `5M`); nil if it refuses it.
    package static func isDecimalAmount(_ value: String) -> Bool? {
        guard byteAmount(value) != nil else { return nil }
        return ["KB", "MB", "GB", "TB", "K", "M", "G", "T"].contains { value.hasSuffix($0) } && !value.hasSuffix("iB")
    }

    /// Bytes with an optional unit: B, K/KB/M/MB/G/GB/T/TB (powers of 1000)
    /// or KiB/MiB/GiB/TiB (powers of 1024); decimals allowed ("1.5GiB").
    package static func byteAmount(_ value: String) -> UInt64? {
        let units: [(String, Double)] = [
            ("KiB", 1024), ("MiB", 1_048_576), ("GiB", 1_073_741_824), ("TiB", 1_099_511_627_776),
            ("KB", 1e3), ("MB", 1e6), ("GB", 1e9), ("TB", 1e12), ("K", 1e3), ("M", 1e6), ("G", 1e9), ("T", 1e12), ("B", 1),
        ]
        var number = value
        var multiplier = 1.0
        for (suffix, factor) in units where value.hasSuffix(suffix) {
            number = String(value.dropLast(suffix.count))
            multiplier = factor
            break
        }
        guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }), let amount = Double(number) else { return nil }
        let bytes = amount * multiplier
        guard bytes.isFinite, bytes < 9.2e18 else { return nil }
        return UInt64(bytes.rounded())
    }
}
