import MPinJSON
import MPinWire
import XCTest

/// The MFA flavour's messages (docs/MFA.md §4, §5.2, §8) as the client writes and reads them.
final class MFAMessageTests: XCTestCase {
    private func text(_ message: some Encodable) throws -> String {
        String(decoding: try WireCoding.encode(message), as: UTF8.self)
    }

    private func object(_ json: String) throws -> JSONValue { try JSONParser().parse(Array(json.utf8)) }

    func testRequests() throws {
        XCTAssertEqual(try text(RegisterRequest(userId: "a@b.c", mobile: 1, wid: "00ff", regCode: "123456789012")),
                       #"{"userId":"a@b.c","mobile":1,"wid":"00ff","regCode":"123456789012"}"#)
        XCTAssertEqual(try text(CodeStatusRequest.abort(accessCode: "00ff")), #"{"status":"abort","wid":"00ff"}"#)
    }

    func testAnswers() throws {
        let session = try object(#"{"prerollId": "", "appName": "Wiki", "appLogoURL": "", "customerId": "c1", "customerName": "Acme", "customerLogoURL": "l"}"#)
        let details = try XCTUnwrap(WireCoding.lenient(SessionDetailsResponse.self, from: session))
        XCTAssertEqual([details.customerId, details.customerName, details.customerLogoURL], ["c1", "Acme", "l"])
        // A Milagro-era answer has no customer.
        let old = try XCTUnwrap(WireCoding.lenient(SessionDetailsResponse.self, from: try object(#"{"appName": "Wiki"}"#)))
        XCTAssertEqual(old.appName, "Wiki")
        XCTAssertNil(old.customerId)

        let regCode = try object(#"{"regCode": "123456789012", "expireTime": 1700000600000, "ttlSeconds": 600, "nowTime": 1700000000000}"#)
        XCTAssertEqual(WireCoding.lenient(RegCodeResponse.self, from: regCode),
                       RegCodeResponse(regCode: "123456789012", expireTime: 1_700_000_600_000, ttlSeconds: 600, nowTime: 1_700_000_000_000))
        let authorize = try object(#"{"qrURL": "http://h#ab", "accessCode": "ab", "webOTT": "cd", "ttlSeconds": 300, "expireTime": 5}"#)
        XCTAssertEqual(WireCoding.lenient(AuthorizeResponse.self, from: authorize)?.qrURL, "http://h#ab")
    }
}
