import Glibc

package struct SystemClock: Sendable {
    /// Seconds added to both clocks: zero in production; tests set `IFMETER_TEST_CLOCK_OFFSET` to stand
    /// a restart hours after the last save without waiting.
    package var offset: Double
    /// Tests step the wall clock alone, as NTP does, by writing seconds into this file.
    let wallStepFile: String?
    /// Tests stand a fresh boot by taking the machine's uptime off the boot clock.
    let bootOffset: Double

    package init(environment: [String: String]) {
        offset = environment["IFMETER_TEST_CLOCK_OFFSET"].flatMap(Double.init) ?? 0
        wallStepFile = environment["IFMETER_TEST_WALL_STEP_FILE"]
        bootOffset = environment["IFMETER_TEST_BOOTTIME_OFFSET"].flatMap(Double.init) ?? 0
    }

    package func now() -> Instant {
        let step = wallStepFile.flatMap { try? FileSystem.readText($0) }.flatMap { Double($0.trimmingWhitespace()) } ?? 0
        return Instant(wall: Int64(Self.read(CLOCK_REALTIME) + offset + step), sinceBoot: Self.read(CLOCK_BOOTTIME) + offset + bootOffset)
    }

    /// CLOCK_MONOTONIC seconds, for intervals within one process.
    package static func monotonic() -> Double { read(CLOCK_MONOTONIC) }

    /// CLOCK_BOOTTIME seconds: an interval that counts a suspend, as the wall clock readers judge us by does.
    package static func boottime() -> Double { read(CLOCK_BOOTTIME) }

    package static func processCPU() -> Double { read(CLOCK_PROCESS_CPUTIME_ID) }

    static func read(_ clock: clockid_t) -> Double {
        var time = timespec()
        clock_gettime(clock, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

/// The kernel's boot id: it changes at every boot, so a stored life from another boot is never current.
package enum BootID {
    package static let defaultPath = "/proc/sys/kernel/random/boot_id"

    /// One line of 64 characters with room to spare: a larger file (a log, /etc/passwd) is never read whole.
    package static let fileLimit = 256

    /// The boot id in the file at `path`, its line break dropped. A regular file past `fileLimit` throws
    /// `FileSystem.NotARegularFile.tooLarge` with its size: wrong data, where a device or FIFO is no input.
    package static func read(from path: String) throws -> String {
        guard let text = try FileSystem.readText(path, atMost: fileLimit) else { throw SystemError("open", path: path, errno: ENOENT) }
        // Only the line's break goes (perhaps CRLF, by bytes: "\r\n" is one Character); spaces are part of no
        // id, and a second line is no boot id.
        var id = Array(text.utf8)
        if id.last == UInt8(ascii: "\n") {
            id.removeLast()
            if id.last == UInt8(ascii: "\r") { id.removeLast() }
        }
        // A BootIDPath= naming some other file (/etc/passwd) must not become every life's and event's boot id.
        guard !id.isEmpty, id.count <= 64, id.allSatisfy(isBootIDByte) else {
            throw SystemError(
                "read boot id", path: path, errno: EINVAL,
                explanation: "\(id.isEmpty ? "empty, " : "")not a boot id (one line of at most 64 letters, digits, '-', '_', '.' and ':', as \(defaultPath) holds)")
        }
        return String(decoding: id, as: UTF8.self)
    }

    private static func isBootIDByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: ":"): true
        default: false
        }
    }
}
