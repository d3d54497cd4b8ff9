/// A configuration problem, located to the file and line.
package struct ConfigurationError: Error, Sendable, CustomStringConvertible, Equatable {
    /// What went wrong, for the exit code: never matched on message text.
    package enum Kind: Sendable, Equatable {
        /// The file named explicitly does not exist (EX_NOINPUT).
        case missingFile
        /// It could not be read, or a line says something invalid (EX_CONFIG).
        case invalid
    }

    package var kind: Kind = .invalid
    package var path: String
    package var line: Int?
    package var message: String

    package init(_ kind: Kind = .invalid, path: String, line: Int?, message: String) {
        self.kind = kind
        self.path = path
        self.line = line
        self.message = message
    }

    package var isMissingFile: Bool { kind == .missingFile }

    /// One printable line whatever the file held: control characters become "?".
    package var description: String {
        let text = line.map { "\(path):\($0): \(message)" } ?? "\(path): \(message)"
        return String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7f ? "?" : $0 }))
    }
}

/// The configuration file, as ifmeter.conf(5) describes it: systemd-style `[Section]` and `Key=Value`
/// lines, `#` or `;` comments. Unknown sections and keys are errors, never ignored: a misspelt key
/// would otherwise silently run with a default.
package enum ConfigurationFile {
    /// Longest accepted line; anything longer is not a hand-written config.
    static let maximumLineLength = 4096

    package static func parse(_ text: String, path: String, into base: Configuration = Configuration()) throws(ConfigurationError) -> Configuration {
        var configuration = base
        var section: String?
        var seen: Set<String> = []
        // A byte-order mark (Windows editors write one) is no part of the first line: "[Daemon]" stays a section.
        let text = text.hasPrefix("\u{FEFF}") ? String(text.dropFirst()) : text
        for (offset, rawLine) in lines(of: text).enumerated() {
            let number = offset + 1
            func fail(_ message: String) -> ConfigurationError {
                ConfigurationError(path: path, line: number, message: message)
            }
            if rawLine.utf8.count > maximumLineLength { throw fail("line longer than \(maximumLineLength) bytes") }
            if rawLine.unicodeScalars.contains(where: { $0.value == 0 }) { throw fail("NUL byte in line") }
            let line = rawLine.trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") {
                guard line.hasSuffix("]"), line.count > 2 else { throw fail("malformed section header \(quoted(line))") }
                let name = String(line.dropFirst().dropLast())
                guard ["Daemon", "Interfaces", "Classes", "Retention", "Budgets", "Aliases", "Display"].contains(name) else {
                    throw fail("unknown section \(quoted(name)) (known: [Daemon], [Interfaces], [Classes], [Retention], [Budgets], [Aliases], [Display])")
                }
                section = name
                continue
            }
            guard let equals = line.firstIndex(of: "=") else { throw fail("expected Key=Value, got \(quoted(line))") }
            let key = line[..<equals].trimmingWhitespace()
            let value = line[line.index(after: equals)...].trimmingWhitespace()
            guard let section else { throw fail("\(quoted(key))= outside any section") }
            guard !key.isEmpty else { throw fail("empty key") }
            // In [Classes] the first match wins: a glob given again would never apply.
            // A target may have several budgets (per day, per cycle): those judge their own repeats.
            let isBudget = section == "Budgets" && !key.hasPrefix("BillingDay")
            guard isBudget || seen.insert("\(section).\(key)").inserted else {
                throw fail(section == "Classes" ? "\(key)= set twice in [Classes]; the first wins, this line would never apply" : "\(key)= set twice in [\(section)]")
            }
            do {
                try apply(section: section, key: key, value: value, to: &configuration)
            } catch {
                throw fail(error.text)
            }
        }
        return configuration
    }

    package struct Message: Error { package var text: String }

    /// "\r\n" is a single Character in Swift, so a file with CRLF line ends is split on both separators.
    package static func lines(of text: String) -> [Substring] {
        text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
    }

    /// The keys of the sections whose keys are not names (all but `[Classes]`, `[Budgets]`, `[Aliases]`),
    /// for the error that names an unknown one.
    static let knownKeys: [String: [String]] = [
        "Daemon": [
            "SampleIntervalSec", "CommitIntervalSec", "StateDirectory", "MaxRate", "EventBufferBytes",
            "BootIDPath", "MetricsFile", "MetricsKeepGoneSec", "SysfsRoot", "TimeSyncWaitSec",
        ],
        "Interfaces": ["Watch"],
        "Retention": ["FiveMinuteHours", "HourlyDays", "DailyDays", "MonthlyMonths", "YearlyYears"],
        "Display": ["Units", "RateUnit", "DayFormat", "MonthFormat"],
    ]

    private static func apply(section: String, key: String, value: String, to c: inout Configuration) throws(Message) {
        switch (section, key) {
        case ("Daemon", "SampleIntervalSec"): c.sampleInterval = try seconds(value, key: key, range: 0.1...86_400)
        case ("Daemon", "CommitIntervalSec"): c.commitInterval = try seconds(value, key: key, range: 0...86_400)
        case ("Daemon", "StateDirectory"): c.stateDirectory = try absolutePath(value, key: key)
        case ("Daemon", "MaxRate"): c.maxRateBitsPerSecond = try rate(value, key: key)
        case ("Daemon", "EventBufferBytes"): c.eventBufferBytes = Int(try count(value, key: key, range: 4096...(1 << 30)))
        case ("Daemon", "BootIDPath"): c.bootIDPath = try absolutePath(value, key: key)
        case ("Daemon", "MetricsFile"): c.metricsFile = try absolutePath(value, key: key)
        case ("Daemon", "MetricsKeepGoneSec"): c.metricsKeepGone = try seconds(value, key: key, range: 0...315_360_000)
        case ("Daemon", "SysfsRoot"): c.sysfsRoot = try absolutePath(value, key: key)
        case ("Daemon", "TimeSyncWaitSec"): c.timeSyncWait = try seconds(value, key: key, range: 0...86_400)
        case ("Interfaces", "Watch"): c.watchedClasses = try classes(value)
        case ("Classes", _): c.overrides.append(try override(pattern: key, value: value))
        case ("Retention", "FiveMinuteHours"): c.retention.fiveMinuteHours = Int(try count(value, key: key, range: 0...100_000))
        case ("Retention", "HourlyDays"): c.retention.hourlyDays = Int(try count(value, key: key, range: 0...100_000))
        case ("Retention", "DailyDays"):
            // Billing-cycle totals are summed from day buckets: keep a whole cycle.
            let days = Int(try count(value, key: key, range: 0...100_000))
            guard days == 0 || days >= 32 else { throw Message(text: "DailyDays=\(days): keep at least 32 days (or 0, forever) to cover a billing cycle") }
            c.retention.dailyDays = days
        case ("Budgets", "BillingDay"): c.billingDay = Int(try count(value, key: key, range: 1...28))
        case ("Budgets", _) where key.hasPrefix("BillingDay."):
            let target = try budgetTarget(String(key.dropFirst("BillingDay.".count)))
            c.billingDays[target.label] = Int(try count(value, key: key, range: 1...28))
        case ("Budgets", _): try addBudget(try budget(target: key, value: value), to: &c)
        case ("Aliases", _):
            let (name, alias) = try aliasEntry(name: key, value: value)
            c.aliases[name] = alias
        case ("Retention", "MonthlyMonths"): c.retention.monthlyMonths = Int(try count(value, key: key, range: 0...100_000))
        case ("Retention", "YearlyYears"): c.retention.yearlyYears = Int(try count(value, key: key, range: 0...10_000))
        case ("Display", "Units"): c.display.units.scale = try choice(value, key: key, ["iec": .iec, "si": .si, "bytes": .raw])
        case ("Display", "RateUnit"): c.display.units.ratesInBits = try choice(value, key: key, ["bits": true, "bytes": false])
        case ("Display", "DayFormat"): c.display.dates.day = try dateFormat(value, key: key, month: false)
        case ("Display", "MonthFormat"): c.display.dates.month = try dateFormat(value, key: key, month: true)
        default:
            // A typo names the key meant; anything else lists the section's keys.
            let keys = knownKeys[section] ?? []
            let typed = Array(key.lowercased())
            let nearest = keys.map { ($0, editDistance(typed, Array($0.lowercased()))) }.min { $0.1 < $1.1 }
            let hint = if let nearest, nearest.1 <= 2 { "; did you mean \(nearest.0)=?" }
                else if keys.isEmpty { "" } else { " (known: \(keys.map { $0 + "=" }.joined(separator: " ")))" }
            throw Message(text: "unknown key \(quoted(key)) in [\(section)]\(hint)")
        }
    }

    /// One of a few words, in any case; the error lists them in the order given.
    static func choice<Value>(_ value: String, key: String, _ words: KeyValuePairs<String, Value>) throws(Message) -> Value {
        guard let chosen = words.first(where: { $0.key == value.lowercased() }) else {
            throw Message(text: "\(key)=\(quoted(value)): expected \(words.map(\.key).joined(separator: ", "))")
        }
        return chosen.value
    }

    /// A strftime pattern, bare or in double quotes as vnstat.conf writes it (`DayFormat "%d.%m.%Y"`).
    static func dateFormat(_ value: String, key: String, month: Bool) throws(Message) -> String {
        let pattern = value.count >= 2 && value.hasPrefix("\"") && value.hasSuffix("\"") ? String(value.dropFirst().dropLast()) : value
        if let problem = DateFormats.problem(pattern, month: month) { throw Message(text: "\(key)=\(quoted(value)): \(problem)") }
        return pattern
    }

    static func seconds(_ value: String, key: String, range: ClosedRange<Double>) throws(Message) -> Double {
        guard let number = Double(value), number.isFinite, range.contains(number) else {
            throw Message(text: "\(key)=\(quoted(value)): expected seconds from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    static func count(_ value: String, key: String, range: ClosedRange<UInt64>) throws(Message) -> UInt64 {
        guard let number = parseScaled(value, base: 1024), range.contains(number) else {
            throw Message(text: "\(key)=\(quoted(value)): expected a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    /// Bits per second with an optional SI suffix (K, M, G, T), like `100M`.
    static func rate(_ value: String, key: String) throws(Message) -> UInt64 {
        guard let number = parseScaled(value, base: 1000), number > 0 else {
            throw Message(text: "\(key)=\(quoted(value)): expected bits per second like 100M or 10G")
        }
        return number
    }

    /// A whole number with an optional K/M/G/T suffix in powers of `base`.
    static func parseScaled(_ value: String, base: UInt64) -> UInt64? {
        var digits = Substring(value)
        var multiplier: UInt64 = 1
        if let last = digits.last, let power = ["K": 1, "M": 2, "G": 3, "T": 4][last.uppercased()] {
            digits = digits.dropLast()
            for _ in 0..<power { multiplier *= base }
        }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let number = UInt64(digits) else { return nil }
        let (product, overflow) = number.multipliedReportingOverflow(by: multiplier)
        return overflow ? nil : product
    }

    /// Damerau-Levenshtein distance (optimal string alignment): a transposition (`cellualr`) counts one.
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }

    /// An alias for an interface: `wwan0=phone`. Shown on screens, so short
    /// and printable; the name is a kernel name, not a pattern.
    static func aliasEntry(name typed: String, value: String) throws(Message) -> (String, String) {
        let name = InterfaceName.fromUser(typed)
        guard (InterfaceName.decode(name)?.count ?? .max) <= 15, isValidGlob(name), !name.contains(where: { "*?[".contains($0) }) else {
            throw Message(text: "\(quoted(name)): an alias names one interface, like wwan0=phone")
        }
        guard !value.isEmpty, value.count <= 32, value.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7f }) else {
            throw Message(text: "\(name)=\(quoted(value)): an alias is 1 to 32 printable characters")
        }
        return (name, value)
    }

    static func absolutePath(_ value: String, key: String) throws(Message) -> String {
        guard value.hasPrefix("/") else { throw Message(text: "\(key)=\(quoted(value)): expected an absolute path") }
        return value
    }

    static func classes(_ value: String) throws(Message) -> Set<InterfaceClass> {
        var result: Set<InterfaceClass> = []
        for word in value.split(whereSeparator: { $0 == " " || $0 == "," }) {
            guard let parsed = InterfaceClass(rawValue: String(word)) else {
                throw Message(text: "Watch=: unknown class \(quoted(String(word))) (known: \(InterfaceClass.spelledOut))")
            }
            result.insert(parsed)
        }
        guard !result.isEmpty else { throw Message(text: "Watch= names no class") }
        return result
    }

    static func override(pattern typed: String, value: String) throws(Message) -> InterfaceOverride {
        // Patterns match encoded names: a UTF-8 pattern is encoded like a kernel name.
        let pattern = InterfaceName.fromUser(typed)
        guard isValidGlob(pattern) else { throw Message(text: "\(quoted(pattern)): invalid name pattern (unclosed [ or longer than 15 characters of name)") }
        if value == "ignore" { return InterfaceOverride(pattern: pattern, action: .ignore) }
        guard let assigned = InterfaceClass(rawValue: value) else {
            throw Message(text: "\(pattern)=\(quoted(value)): expected \(InterfaceClass.allCases.map(\.rawValue).joined(separator: ", ")) or ignore")
        }
        return InterfaceOverride(pattern: pattern, action: .assign(assigned))
    }

    /// Interface names are at most 15 bytes of printable characters; a pattern
    /// needs balanced brackets to mean what it says.
    static func isValidGlob(_ pattern: String) -> Bool {
        guard pattern.utf8.count <= 64, pattern.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7f && $0 != "/" }) else {
            return false
        }
        var inBracket = false
        for character in pattern {
            if character == "[" && !inBracket { inBracket = true } else if character == "]" && inBracket { inBracket = false }
        }
        return !inBracket
    }

    /// The 1-based line holding the first byte sequence that is not UTF-8.
    static func firstInvalidUTF8Line(_ bytes: [UInt8]) -> Int {
        var line = 1
        var start = 0
        for (index, byte) in bytes.enumerated() where byte == 0x0a {
            if String(validating: bytes[start..<index], as: UTF8.self) == nil { return line }
            line += 1
            start = index + 1
        }
        return line
    }

    /// Text from the file as an error shows it: quoted, cut to what a person reads, controls as `?`.
    static func quoted(_ text: some StringProtocol) -> String {
        let limit = 40
        let shown = text.count > limit ? text.prefix(limit) + "…" : Substring(text)
        return "\"" + shown.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7f ? "?" : String($0) }.joined() + "\""
    }

    /// A missing explicit file is an error; the default path may be absent.
    package static func load(path: String, required: Bool) throws(ConfigurationError) -> Configuration {
        let bytes: [UInt8]?
        do {
            bytes = try FileSystem.readBytes(path)
        } catch {
            throw ConfigurationError(path: path, line: nil, message: "cannot read: \(error)")
        }
        guard let bytes else {
            if required { throw ConfigurationError(.missingFile, path: path, line: nil, message: "no such file") }
            return Configuration()
        }
        // Decoding would turn invalid bytes into U+FFFD and so silently
        // rewrite a path (MetricsFile=, StateDirectory=) or a name.
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ConfigurationError(path: path, line: firstInvalidUTF8Line(bytes), message: "not valid UTF-8")
        }
        return try parse(text, path: path)
    }
}

extension StringProtocol {
    func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
