import Glibc
import IfmeterCore

let environment = Dictionary(CommandLine.environment.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
// An argument that is not UTF-8 can only be meant as an interface name:
// it is taken in InterfaceName's encoded form, never repaired to U+FFFD.
let words = CommandLine.argumentBytes.map { $0.text ?? InterfaceName.encode(bytes: $0.bytes) }
exit(IfmeterCommand.main(words, environment: environment))
