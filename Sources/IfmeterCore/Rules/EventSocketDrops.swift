/// The drop count last seen on the event socket, with its boot and cookie (unique in a boot), stored as "boot cookie
/// drops": a socket outliving the daemon carries its count on, so the next process tells an overrun nobody read.
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

    /// What the last reader saw on `socket`: 0 if it was recorded for another (every drop is news).
    package func seen(onSocket socket: UInt64, bootID: String) -> UInt32 {
        self.bootID == bootID && self.socket == socket && socket != 0 ? drops : 0
    }
}
