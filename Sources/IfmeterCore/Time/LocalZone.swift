import Glibc

/// The time zone bucket boundaries follow: the daemon records its own in the store and the CLI adopts
/// it, so a reader with another TZ (or none) sees the days the daemon wrote, never a day twice.
package enum LocalZone {
    /// This process's zone: $TZ, else what /etc/localtime links to under zoneinfo, else that link's target, else "UTC".
    package static func current() -> String {
        if let tz = getenv("TZ").map({ String(cString: $0) }), !tz.isEmpty { return tz }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/etc/localtime", &buffer, buffer.count - 1)
        guard count > 0 else { return "UTC" }
        // A byte search: String.firstRange(of:) would link _StringProcessing, kept out of the binaries.
        let target = buffer[0..<count].map { UInt8(bitPattern: $0) }
        let marker = Array("zoneinfo/".utf8)
        if let at = target.indices.first(where: { target[$0...].starts(with: marker) }) {
            return String(decoding: target[(at + marker.count)...], as: UTF8.self)
        }
        return ":" + String(decoding: target, as: UTF8.self)
    }

    /// For a long-running process: names the zone /etc/localtime links to in $TZ, which glibc reads once
    /// (without it every mktime(3) stats /etc/localtime again). A zone change then needs a restart, as it
    /// would anyway: the store records the zone its buckets were cut in.
    package static func pinForProcess() {
        guard getenv("TZ") == nil else { return }
        let zone = current()
        guard zone != "UTC" || FileSystem.symbolicLinkTarget("/etc/localtime") != nil, !zone.hasPrefix(":") else { return }
        adopt(zone)
    }

    /// Makes `name` this process's local time zone.
    package static func adopt(_ name: String) {
        setenv("TZ", name, 1)
        tzset()
    }
}
