@testable import IfmeterCore
import Testing

/// The request `ifmeter` leaves for a running daemon, and its reply: every name survives the trip,
/// and anything else in the file is no request.
@Suite struct EditRequestTests {
    static let edits: [StoreEdit] = [
        .forget("tun0"), .watch("eth0"), .unwatch("wlan0"),
        .rename("wwan0", to: "wwp0s20u4"), .merge("a b\nc", into: "\\x01tun"),
        .forget(String(repeating: "é", count: 7)),
    ]

    @Test(arguments: edits) func anEditSurvivesTheTrip(_ edit: StoreEdit) {
        #expect(EditRequest.decode(EditRequest.encode(edit)) == edit)
    }

    static let notRequests: [String] = [
        "", "ifmeter-edit 1\n", "ifmeter-edit 2\nforget 74756e30\n", "ifmeter-edit 1\nforget 74756e30",
        "ifmeter-edit 1\nforget 74756e3\n", "ifmeter-edit 1\nforget 74756E30\n", "ifmeter-edit 1\nforget\n",
        "ifmeter-edit 1\nrename 74756e30\n", "ifmeter-edit 1\ndrop 74756e30\n", "ifmeter-edit 1\nforget 74756e30\nwatch 74\n",
        "ifmeter-edit 1\nforget ff\n",
    ]

    @Test(arguments: notRequests) func anythingElseIsNoRequest(_ text: String) {
        #expect(EditRequest.decode(Array(text.utf8)) == nil)
    }

    @Test func aReplyCarriesItsStatusAndOneLine() {
        let outcome = EditOutcome(.usage, "tun0 is a link counted now\nsecond line")
        let decoded = EditRequest.decode(reply: EditRequest.encode(outcome))
        #expect(decoded?.status == .usage)
        #expect(decoded?.message == "tun0 is a link counted now\\nsecond line")
        #expect(EditRequest.decode(reply: Array("99 no such status\n".utf8)) == nil)
        #expect(EditRequest.decode(reply: Array("0 cut short".utf8)) == nil)
    }
}
