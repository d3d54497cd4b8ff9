import Foundation
import Glibc
import IfmeterTestSupport
import Testing
@testable import IfmeterCore

/// The metric and label names a PromQL expression uses. Strings are
/// skipped; Grafana's `$variables` are not names.
enum PromQLNames {
    static let keywords: Set<String> = [
        "sum", "min", "max", "avg", "count", "rate", "increase", "irate", "by", "without", "on", "ignoring", "group_left",
        "group_right", "unless", "and", "or", "time", "vector", "label_replace", "label_values", "absent", "offset", "bool",
        "topk", "bottomk", "delta", "deriv", "predict_linear", "clamp_min", "clamp_max", "abs", "scalar",
    ]
    static let groupingWords: Set<String> = ["by", "without", "on", "ignoring", "group_left", "group_right"]

    /// (metrics, labels) named in `expression`.
    static func names(_ expression: String) -> (metrics: Set<String>, labels: Set<String>) {
        var metrics: Set<String> = []
        var labels: Set<String> = []
        let characters = Array(expression)
        var index = 0
        var braceDepth = 0
        var groupingParenthesis = false
        var previousWord = ""
        var labelValuesArgument = -1
        func isStart(_ c: Character) -> Bool { c.isLetter || c == "_" || c == ":" }
        func isPart(_ c: Character) -> Bool { c.isLetter || c.isNumber || c == "_" || c == ":" }
        while index < characters.count {
            let c = characters[index]
            if c == "\"" || c == "'" {
                index += 1
                while index < characters.count && characters[index] != c { index += characters[index] == "\\" ? 2 : 1 }
                index += 1
                continue
            }
            if c == "$" {  // a Grafana variable, $name or ${name}
                index += 1
                while index < characters.count && (isPart(characters[index]) || "{}".contains(characters[index])) { index += 1 }
                continue
            }
            if c == "[" {  // a range: [5m], [$__range]
                while index < characters.count && characters[index] != "]" { index += 1 }
                index += 1
                continue
            }
            if c == "{" { braceDepth += 1 }
            if c == "}" { braceDepth -= 1 }
            if c == "(" {
                groupingParenthesis = groupingWords.contains(previousWord)
                if previousWord == "label_values" { labelValuesArgument = 0 }
            }
            if c == ")" { groupingParenthesis = false; labelValuesArgument = -1 }
            if c == "," && labelValuesArgument >= 0 && braceDepth == 0 { labelValuesArgument += 1 }
            if isStart(c) && !(index > 0 && (characters[index - 1].isNumber || characters[index - 1] == ".")) {
                var end = index
                while end < characters.count && isPart(characters[end]) { end += 1 }
                let word = String(characters[index..<end])
                index = end
                if braceDepth > 0 || groupingParenthesis || labelValuesArgument == 1 {
                    labels.insert(word)
                } else if !keywords.contains(word) && !(word.allSatisfy(\.isLetter) && word.count <= 2) {
                    metrics.insert(word)  // "e9" of 20e9 is skipped above; "h", "d" are durations
                }
                previousWord = word
                continue
            }
            if !c.isWhitespace { previousWord = "" }
            index += 1
        }
        return (metrics, labels)
    }
}

/// The Prometheus rules and the Grafana dashboard shipped in contrib/,
/// checked by promtool and against the metrics file the real daemon writes.
@Suite struct PrometheusContribTests {
    static let contrib = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("contrib")
    static let rules = contrib.appendingPathComponent("prometheus/ifmeter-rules.yml").path
    static let dashboard = contrib.appendingPathComponent("grafana/ifmeter.json").path

    @Test func promtoolChecksAndUnitTestsTheRules() throws {
        let check = try runProcess("/usr/bin/env", ["promtool", "check", "rules", Self.rules])
        #expect(check.status == 0, "\(check.standardOutput)\(check.standardError)")
        let unitTests = try runProcess("/usr/bin/env", ["promtool", "test", "rules", Self.contrib.appendingPathComponent("prometheus/ifmeter-rules.test.yml").path])
        #expect(unitTests.status == 0, "\(unitTests.standardOutput)\(unitTests.standardError)")
    }

    /// Every `expr:` of the rules file (folded `>` blocks joined), and the
    /// names the `record:` lines define.
    static func ruleExpressions() throws -> (expressions: [String], recorded: Set<String>) {
        let lines = try String(contentsOfFile: rules, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var expressions: [String] = []
        var recorded: Set<String> = []
        var index = 0
        while index < lines.count {
            let trimmed = lines[index].trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("- record:") { recorded.insert(trimmed.dropFirst("- record:".count).trimmingCharacters(in: .whitespaces)) }
            if trimmed.hasPrefix("expr:") {
                let value = trimmed.dropFirst("expr:".count).trimmingCharacters(in: .whitespaces)
                if value == ">" || value == "|" {
                    let indent = lines[index].prefix { $0 == " " }.count
                    var block: [String] = []
                    while index + 1 < lines.count, lines[index + 1].prefix(while: { $0 == " " }).count > indent {
                        index += 1
                        block.append(lines[index].trimmingCharacters(in: .whitespaces))
                    }
                    expressions.append(block.joined(separator: " "))
                } else {
                    expressions.append(value)
                }
            }
            index += 1
        }
        return (expressions, recorded)
    }

    /// Every PromQL query of the dashboard: panel targets and variables.
    static func dashboardExpressions() throws -> [String] {
        let document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dashboard))) as? [String: Any])
        let panels = try #require(document["panels"] as? [[String: Any]])
        var expressions = panels.flatMap { ($0["targets"] as? [[String: Any]] ?? []).compactMap { $0["expr"] as? String } }
        let variables = ((document["templating"] as? [String: Any])?["list"] as? [[String: Any]]) ?? []
        expressions += variables.compactMap { ($0["query"] as? [String: Any])?["query"] as? String }
        return expressions
    }

    @Test func theNameCheckerFindsWhatItMust() {
        let (metrics, labels) = PromQLNames.names(
            #"sum by (instance, class) (increase(ifmeter_nope_total{device=~"$device",class="x"}[30d])) > on (class) group_left ifmeter:budget_bytes * 20e9 + label_values(foo_bar, kind)"#)
        #expect(metrics == ["ifmeter_nope_total", "ifmeter:budget_bytes", "foo_bar"])
        #expect(labels == ["instance", "class", "device", "kind"])
    }

    /// The families and labels of the file the real daemon writes, read from
    /// the file (not a list kept here), so a change to the file's names fails
    /// this test until the rules and the dashboard follow.
    @Test(.enabled(if: TestEnvironment.isRoot, TestEnvironment.rootReason))
    func everyQueryNamesOnlyWhatTheMetricsFileHas() throws {
        let daemon = try DaemonHarness(namespace: NetworkNamespace(), configuration: "[Budgets]\ntunnel=1GB\ntun0=1MB per day rx\n")
        let metricsPath = daemon.directory.appendingPathComponent("ifmeter.prom").path
        try daemon.start(interval: 0.2, commitInterval: 0.5, extra: ["--metrics-file", metricsPath])
        // Two lives of tun0, each torn down: samples, and resets with reasons.
        try daemon.namespace.tunTraffic(name: "tun0", rxPackets: 5, txPackets: 3, size: 500, lives: 2)
        var text = ""
        for _ in 0..<100 {
            text = (try? String(contentsOfFile: metricsPath, encoding: .utf8)) ?? ""
            if text.contains("ifmeter_resets_total{") && text.contains("ifmeter_receive_bytes_total{") { break }
            usleep(100_000)
        }
        #expect(daemon.stop() == 0)
        #expect(text.contains("ifmeter_resets_total{"), "\(text)")
        var families: Set<String> = []
        var labels: Set<String> = []
        for line in text.split(separator: "\n") {
            if line.hasPrefix("# TYPE ") { families.insert(String(line.split(separator: " ")[2])) }
            if line.hasPrefix("#") { continue }
            guard let open = line.firstIndex(of: "{") else { continue }
            labels.formUnion(PromQLNames.names(String(line[open...])).labels)
        }
        #expect(families.count >= 10)
        #expect(labels.isSuperset(of: ["device", "class", "reason", "period", "direction"]), "\(labels)")
        // Prometheus adds these when it scrapes node_exporter.
        labels.formUnion(["instance", "job"])
        let (ruleExpressions, recorded) = try Self.ruleExpressions()
        let dashboardExpressions = try Self.dashboardExpressions()
        #expect(ruleExpressions.count >= 5)
        #expect(dashboardExpressions.count >= 9)
        for expression in ruleExpressions + dashboardExpressions {
            let names = PromQLNames.names(expression)
            #expect(!names.metrics.isEmpty || expression.hasPrefix("label_replace(vector("), "\(expression)")
            for metric in names.metrics {
                #expect(families.contains(metric) || recorded.contains(metric), "\(metric) is not in the metrics file: \(expression)")
            }
            for label in names.labels {
                #expect(labels.contains(label), "label \(label) is not in the metrics file: \(expression)")
            }
        }
    }
}
