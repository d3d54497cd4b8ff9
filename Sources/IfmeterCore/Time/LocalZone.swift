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

    /// The zone files glibc reads a zone name from.
    package static let zoneDirectory = "/usr/share/zoneinfo"

    /// Whether `name` is a zone name that can only make glibc read the system's own zone files: relative
    /// (no leading `:` or `/`), no `..`, plain characters, and a regular file under `zoneDirectory`
    /// (whose links are the system's own). A store's recorded zone reaches `setenv("TZ")` as root.
    package static func isZoneName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...255).contains(bytes.count), bytes.first != UInt8(ascii: "/"),
              bytes.allSatisfy({ isalnum(Int32($0)) != 0 || "/_+-.".utf8.contains($0) }),
              !name.split(separator: "/", omittingEmptySubsequences: false).contains(where: { $0.isEmpty || $0 == "." || $0 == ".." })
        else { return false }
        var info = stat()
        return stat(zoneDirectory + "/" + name, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
    }

    package static func adopt(_ name: String) {
        setenv("TZ", name, 1)
        tzset()
    }
}
