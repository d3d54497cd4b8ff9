import Glibc

/// Copies the daemon's metrics file into node_exporter's textfile directory, so that what
/// node_exporter opens is a bounded regular file the daemon's user cannot turn into a FIFO, a link
/// or a huge file (README 'Security'). Runs as its own service (ifmeter-metrics.service), woken by
/// inotify when the daemon renames a new file into its runtime directory: no polling, no process
/// per sample.
package struct MetricsRelay {
    /// The largest file copied, and the largest the daemon writes (MetricsFile): a bound on what
    /// node_exporter parses, not a measured need.
    package static let sizeLimit = 8 << 20

    package let source: String
    package let target: String

    package init(source: String, target: String) {
        self.source = source
        self.target = target
    }

    /// The lines node_exporter is shown: ifmeter's own families and their HELP and TYPE, so a
    /// file written as the daemon's user cannot speak for another collector's series.
    package static func kept(_ bytes: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            let isOurs = line.starts(with: Self.family) || line.starts(with: Self.help) || line.starts(with: Self.type)
            guard isOurs, !line.contains(0) else { continue }
            output += line
            output.append(UInt8(ascii: "\n"))
        }
        return output
    }

    private static let family = Array("ifmeter_".utf8)
    private static let help = Array("# HELP ifmeter_".utf8)
    private static let type = Array("# TYPE ifmeter_".utf8)

    /// One copy: read without following a link or waiting on a FIFO, at most `sizeLimit` bytes,
    /// then replaced atomically. Nothing to copy yet (no daemon has written one) is no error.
    package func copy() throws {
        guard let (fd, size) = try FileSystem.openRegularFile(source, flags: O_RDONLY, limit: Self.sizeLimit) else { return }
        defer { close(fd) }
        let bytes = try FileSystem.readPrefix(fd, size: size, path: source)
        try FileSystem.writeAtomically(Self.kept(bytes), to: target, mode: 0o644, synced: false)
    }

    /// Copies now, then after every file renamed into the source's directory, until killed.
    /// Failures are logged once until a copy succeeds again.
    package func run() throws -> Never {
        let directory = FileSystem.directoryName(source)
        let watch = try valueOrErrno("inotify_init1", path: directory) { inotify_init1(Int32(IN_CLOEXEC)) }.get()
        _ = try valueOrErrno("watch", path: directory) { inotify_add_watch(watch, directory, UInt32(IN_MOVED_TO)) }.get()
        Log.notice("ifmeterd: relaying \(source) to \(target) (ifmeter_ lines only, at most \(Self.sizeLimit) bytes)")
        var copies = RetriedCondition()
        var events = [UInt8](repeating: 0, count: 4096)
        while true {
            do {
                try copy()
                copies.succeeded("\(target): copied again")
            } catch {
                copies.failed("\(error); the copy in \(target) stays as it was")
            }
            // Which name moved in does not matter: every wakeup copies once.
            let count = events.withUnsafeMutableBytes { read(watch, $0.baseAddress, $0.count) }
            if count < 0 && errno != EINTR {
                throw SystemError("read inotify events", path: directory, errno: errno)
            }
        }
    }
}
