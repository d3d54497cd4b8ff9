import IfmeterCore
import Testing

/// The zone a store records reaches `setenv("TZ")` in root's `ifmeter`: only a name that makes glibc
/// read a zone file of the system's own is taken.
struct LocalZoneTests {
    @Test(arguments: [
        ("Europe/Berlin", true), ("UTC", true), ("Etc/UTC", true), ("America/Argentina/Buenos_Aires", true),
        ("Cuba", true),  // a link inside the zone directory: the system's own
        (":/etc/passwd", false), ("/dev/zero", false), (":UTC", false), ("../../../dev/tty", false),
        ("Europe/../../../../dev/zero", false), ("Europe//Berlin", false), ("./UTC", false), ("", false),
        ("Europe", false),  // a directory
        ("Mars/Olympus_Mons", false), ("UTC\n", false), (String(repeating: "A", count: 300), false),
    ])
    func onlyASystemZoneNameIsTaken(_ name: String, _ taken: Bool) {
        #expect(LocalZone.isZoneName(name) == taken)
    }
}
