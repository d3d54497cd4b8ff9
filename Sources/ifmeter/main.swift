import Glibc
import IfmeterCore

let environment = Dictionary(CommandLine.environment.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
exit(IfmeterCommand.main(Array(CommandLine.arguments.dropFirst()), environment: environment))
