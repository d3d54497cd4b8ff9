/// sysexits(3) codes: every failure maps to one.
public enum ExitCode: Int32, Sendable {
    case success = 0
    case usage = 64
    case dataError = 65
    case noInput = 66
    case unavailable = 69
    case software = 70
    case cannotCreate = 73
    case ioError = 74
    case noPermission = 77
    case config = 78
}
