/// The drop count the daemon last saw on its link event socket, with the
/// socket it was seen on (the boot and the socket's cookie, never reused within a
/// boot), as the store keeps it: "boot cookie drops".
///
/// An overrun shows as a rise in the kernel's drop count
/// (`ifm_events_read`). A socket that outlives the daemon (ifmeterd.socket,
/// or the one systemd's store keeps) carries that count from process to
/// process, and the next process must know what the last one saw to tell
/// an overrun while no process read from one it has heard of.
package struct EventSocketDrops: Equatable, Sendable {
    package var bootID: String
    package var socket: UInt64
    package var drops: UInt32

    package init(bootID: String, socket: UInt64, drops: UInt32) {
        self.bootID = bootID
        self.socket = socket
        self.drops = drops
    }

    package init?(text: String) {
        let fields = text.split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 3, !fields[0].isEmpty, let socket = UInt64(fields[1]), let drops = UInt32(fields[2]) else { return nil }
        self.init(bootID: String(fields[0]), socket: socket, drops: drops)
    }

    package var text: String { "\(bootID) \(socket) \(drops)" }

    /// What the last reader saw on `socket`: its recorded count if this is
    /// the socket it was recorded for, else 0 (every drop is news).
    package func seen(onSocket socket: UInt64, bootID: String) -> UInt32 {
        self.bootID == bootID && self.socket == socket && socket != 0 ? drops : 0
    }
}
