import Glibc
import IfmeterCore

let words = Array(CommandLine.arguments.dropFirst())
// Answered before the command parser: neither reads a configuration or store.
switch words.first {
case "--version":
    Output.standardOutput("ifmeter \(Version.number)\n")
    exit(0)
case "completions":
    exit(Completions.main(Array(words.dropFirst())))
default:
    let environment = Dictionary(CommandLine.environment.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
    exit(IfmeterCommand.main(words, environment: environment))
}
