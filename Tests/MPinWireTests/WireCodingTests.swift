import XCTest
import MPinJSON
import MPinWire

/// The one wire format: what the client sends is byte for byte what it sent when it built the
/// JSON by hand (and what the recorded SDK traffic shows), the server reads it strictly, and
/// the client reads answers with the SDK's lenient defaults.
final class WireCodingTests: XCTestCase {
    private func text(_ message: some Encodable) throws -> String {
        String(decoding: try WireCoding.encode(message), as: UTF8.self)
    }

    private func object(_ json: String) throws -> JSONValue { try JSONParser().parse(Array(json.utf8)) }

    func testClientRequestsKeepTheirBytes() throws {
        XCTAssertEqual(try text(Pass1Request(mpinId: "7b22", ut: "", u: "04ab")),
                       #"{"pass":1,"mpin_id":"7b22","UT":"","U":"04ab"}"#)
        XCTAssertEqual(try text(Pass2Request(mpinId: "7b22", v: "04cd", wid: "0", otp: true)),
                       #"{"pass":2,"OTP":true,"WID":"0","V":"04cd","mpin_id":"7b22"}"#)
        XCTAssertEqual(try text(RegisterRequest(userId: "a@b.c", mobile: 1)), #"{"userId":"a@b.c","mobile":1}"#)
        XCTAssertEqual(try text(RegisterRequest(userId: "a@b.c", mobile: 1, deviceName: "d", userData: "u",
                                                activateCode: "123", regOTT: "ff")),
                       #"{"userId":"a@b.c","mobile":1,"deviceName":"d","userData":"u","activateCode":"123","regOTT":"ff"}"#)
        XCTAssertEqual(try text(CodeStatusRequest.userChosen(accessCode: "wid1", userId: "a@b.c")),
                       #"{"status":"user","wid":"wid1","userId":"a@b.c"}"#)
        XCTAssertEqual(try text(CodeStatusRequest.sessionDetails(accessCode: "wid1")), #"{"status":"wid","wid":"wid1"}"#)
    }

    func testTheClientForwardsThePass2AnswerUntouched() throws {
        let pass2 = try object(#"{"version":"0.3","pass":2,"authOTT":"ab","extra":{"kept":[1,true]}}"#)
        XCTAssertEqual(try text(AuthenticateEnvelope(mpinResponse: pass2)),
                       #"{"mpinResponse":{"version":"0.3","pass":2,"authOTT":"ab","extra":{"kept":[1,true]}}}"#)
        // The server reads the same bytes as its typed request.
        let typed = try WireCoding.strict(AuthenticateRequest.self, from: try WireCoding.encode(AuthenticateEnvelope(mpinResponse: pass2)))
        XCTAssertEqual(typed.mpinResponse.authOTT, "ab")
        XCTAssertEqual(typed.mpinResponse.pass, 2)
    }

    func testTheServerReadsStrictly() {
        XCTAssertThrowsError(try WireCoding.strict(Pass1Request.self, from: Array(#"{"mpin_id":"7b","UT":""}"#.utf8))) {
            XCTAssertEqual($0 as? JSONError, .missingKey(path: "U"))
        }
        XCTAssertThrowsError(try WireCoding.strict(Pass1Request.self, from: Array(#"{"mpin_id":7,"UT":"","U":"04"}"#.utf8))) {
            XCTAssertEqual($0 as? JSONError, .typeMismatch(path: "mpin_id", expected: "string", found: "number"))
        }
        XCTAssertThrowsError(try WireCoding.strict(Pass2Request.self, from: Array(#"{"OTP":"x","WID":"0","V":"04","mpin_id":"7b"}"#.utf8)))
        XCTAssertEqual(try WireCoding.strict(Pass2Request.self, from: Array(#"{"OTP":1,"WID":"0","V":"04","mpin_id":"7b"}"#.utf8)).OTP, true)
    }

    func testTheClientReadsWithTheSDKDefaults() throws {
        // Missing and wrongly typed fields take the SDK's defaults instead of failing (docs/PROTOCOL.md §2.1).
        let settings = try XCTUnwrap(WireCoding.lenient(ClientSettings.self, from: try object(
            #"{"mpinAuthServerURL":"http://a/rps","requestOTP":"yes","accessNumberDigits":7,"usePermits":"no","cSum":1.5}"#)))
        XCTAssertEqual(settings.mpinAuthServerURL, "http://a/rps")
        XCTAssertEqual(settings.requestOTP, false)
        XCTAssertEqual(settings.accessNumberDigits, 7)
        XCTAssertEqual(settings.registerURL, "")
        XCTAssertEqual(settings.cSum, 0)
        XCTAssertNil(settings.usePermits, "a wrongly typed optional is absent, so the SDK's default (true) applies")
        XCTAssertNil(settings.accessNumberUseCheckSum)
        XCTAssertEqual(WireCoding.lenient(ClientSettings.self, from: try object(#"{"usePermits":false}"#))?.usePermits, false)

        let register = try XCTUnwrap(WireCoding.lenient(RegisterResponse.self, from: try object(#"{"mpinId":"7b","active":1}"#)))
        XCTAssertEqual(register.mpinId, "7b")
        XCTAssertEqual(register.regOTT, "")
        XCTAssertFalse(register.active)

        // Nested wire types are read the same way, even when the member is missing or not an object.
        let mobile = try XCTUnwrap(WireCoding.lenient(MobileAuthenticateResponse.self, from: try object(#"{"logoutURL":"/x","logoutData":3}"#)))
        XCTAssertEqual(mobile.logoutURL, "/x")
        XCTAssertEqual(mobile.logoutData, LogoutData(userId: "", sessionToken: ""))
        XCTAssertEqual(WireCoding.lenient(TimePermitResponse.self, from: .object([]))?.date, 0)
    }

    func testLenientReadingDoesNotLeakIntoStrictReading() throws {
        // The same document, read by each side: only the client's reading fills in defaults.
        let bytes = Array(#"{"y":5}"#.utf8)
        XCTAssertThrowsError(try WireCoding.strict(Pass1Response.self, from: bytes))
        XCTAssertEqual(WireCoding.lenient(Pass1Response.self, from: try JSONParser().parse(bytes))?.y, "")
    }
}
