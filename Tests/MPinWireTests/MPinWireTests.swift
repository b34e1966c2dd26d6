import Foundation
import XCTest
import MPinWire

final class MPinWireTests: XCTestCase {
    func testHexRoundTripAndCase() {
        let bytes: [UInt8] = [0x00, 0x0a, 0xff, 0x7b, 0x04]
        XCTAssertEqual(Hex.encode(bytes), "000aff7b04")
        XCTAssertEqual(Hex.decode("000AFF7b04"), bytes)
        XCTAssertEqual(Hex.canonical("ABCDEF"), "abcdef")
        XCTAssertNil(Hex.decode("abc"))
        XCTAssertNil(Hex.decode("zz"))
        XCTAssertEqual(Hex.decode(""), [])
        XCTAssertNil(Hex.decode("0011", length: 3))
        XCTAssertEqual(Hex.decode("001122", length: 3), [0, 0x11, 0x22])
        // Every byte value, from contiguous and non-contiguous input alike.
        let all = (0...255).map { UInt8($0) }
        let expected = all.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        XCTAssertEqual(Hex.encode(all), expected)
        XCTAssertEqual(Hex.encode(all.lazy.map { $0 }), expected)
        XCTAssertEqual(Hex.encode(all[16...]), String(expected.dropFirst(32)))
        XCTAssertEqual(Hex.decode(expected), all)
        XCTAssertEqual(Hex.decode(expected.uppercased()), all)
        XCTAssertEqual(Hex.decode(expected.dropFirst(2)), Array(all.dropFirst()))
        XCTAssertNil(Hex.decode("0g"))
        XCTAssertNil(Hex.decode("/0"))
    }

    func testHMACMatchesRFC4231() {
        // RFC 4231 test cases 2 and 6 (key longer than the block).
        XCTAssertEqual(Hex.encode(HMACSHA256.code(key: Array("Jefe".utf8),
                                                  message: Array("what do ya want for nothing?".utf8))),
                       "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        XCTAssertEqual(Hex.encode(HMACSHA256.code(key: [UInt8](repeating: 0xaa, count: 131),
                                                  message: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8))),
                       "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }

    func testSignatureVerify() {
        let msg = WireSignature.clientSecretMessage(appID: "app", hashMpinID: "ab", expires: "2016-10-11T13:59:16Z")
        XCTAssertEqual(msg, "clientSecretappab2016-10-11T13:59:16Z")
        let sig = WireSignature.sign(msg, key: "key")
        XCTAssertEqual(sig.count, 64)
        XCTAssertTrue(WireSignature.verify(sig, message: msg, key: "key"))
        XCTAssertTrue(WireSignature.verify(sig.uppercased(), message: msg, key: "key"))
        XCTAssertFalse(WireSignature.verify(sig, message: msg + "x", key: "key"))
        XCTAssertFalse(WireSignature.verify(sig, message: msg, key: "other"))
        XCTAssertFalse(WireSignature.verify("", message: msg, key: "key"))
    }

    func testAccessNumberChecksumRecordedExamples() {
        XCTAssertTrue(AccessNumber.isValid("4241703"))
        XCTAssertTrue(AccessNumber.isValid("6418791"))
        XCTAssertFalse(AccessNumber.isValid("6419791"))
        XCTAssertFalse(AccessNumber.isValid("424170"))
        XCTAssertFalse(AccessNumber.isValid("42417a3"))
        XCTAssertEqual(AccessNumber.issue(body: 424170), "4241703")
        XCTAssertEqual(AccessNumber.checkDigit([6, 4, 1, 9, 7, 9]), 8)
        // Issued numbers are always valid and never carry check digit 0 or 10.
        for body in stride(from: 0, to: 1_000_000, by: 997) {
            if let n = AccessNumber.issue(body: body) {
                XCTAssertTrue(AccessNumber.isValid(n))
                XCTAssertTrue(AccessNumber.sdkAccepts(n))
                XCTAssertNotEqual(n.last, "0")
            } else {
                let d = Array(String(body).leftPad6).map { Int(String($0))! }
                XCTAssertTrue([0, 10].contains(AccessNumber.checkDigit(d)))
            }
        }
    }

    func testMPinIdMatchesRecordingByteForByte() {
        let recorded = "7b226d6f62696c65223a20312c2022697373756564223a2022323031362d31302d31312031333a35383a31362e383331383637222c2022757365724944223a20227465737455736572222c202273616c74223a20223331383365346135653433366432616663616663666430613631636131356363227d"
        // 2016-10-11 13:58:16.831867 UTC
        let issued = WireTimestamp(secondsSince1970: 1_476_194_296.831867)
        let built = MPinIdentity.build(userID: "testUser", mobile: 1, issued: issued,
                                       salt: Hex.decode("3183e4a5e436d2afcafcfd0a61ca15cc")!)
        XCTAssertEqual(Hex.encode(built), recorded)
        let parsed = MPinIdentity.parse(Hex.decode(recorded)!)
        XCTAssertEqual(parsed?.userID, "testUser")
        XCTAssertEqual(parsed?.mobile, 1)
    }

    func testMPinIdEscapesLikePython() {
        XCTAssertEqual(MPinIdentity.pythonQuoted("a\"b\\c\né"), "\"a\\\"b\\\\c\\n\\u00e9\"")
        XCTAssertEqual(MPinIdentity.pythonQuoted("😀"), "\"\\ud83d\\ude00\"")
        let id = MPinIdentity.build(userID: "ü\"x", mobile: 0, issued: WireTimestamp(secondsSince1970: 0), salt: [1])
        XCTAssertEqual(MPinIdentity.parse(id)?.userID, "ü\"x")
        XCTAssertTrue(id.allSatisfy { $0 < 0x80 })
    }

    func testTimeFormats() {
        let t = WireTimestamp(secondsSince1970: 1_476_194_296.831867)
        XCTAssertEqual(WireTime.pythonString(t), "2016-10-11 13:58:16.831867")
        XCTAssertEqual(WireTime.pythonISO(t), "2016-10-11T13:58:16.831867")
        XCTAssertEqual(WireTime.signatureExpires(t), "2016-10-11T13:58:16Z")
        XCTAssertEqual(WireTime.pythonISO(WireTimestamp(secondsSince1970: 1_476_194_296)), "2016-10-11T13:58:16")
        XCTAssertEqual(WireTime.day(t), 17085)
        XCTAssertEqual(WireTime.milliseconds(WireTimestamp(secondsSince1970: 1_476_194_301)), 1_476_194_301_000)
        XCTAssertEqual(WireTime.parseSignatureExpires("2016-10-11T13:58:16Z"), WireTimestamp(secondsSince1970: 1_476_194_296))
        XCTAssertEqual(WireTime.parseSignatureExpires("2000-02-29 00:00:00Z"), WireTimestamp(secondsSince1970: 951_782_400))
        XCTAssertNil(WireTime.parseSignatureExpires("2016-13-11T13:58:16Z"))
        XCTAssertNil(WireTime.parseSignatureExpires("garbage"))
    }

    func testFormEncodingOfRecordedParams() throws {
        let recorded = "mobile=1&expires=2016-10-11T13%3A59%3A16Z&app_id=dfb3538a8ed111e693e3022b36cac222&hash_mpin_id=b5eaf303c53824c6c65923df3e331163420240a5dcc9ed3188b80866746d80be&signature=fc7e62c40d82eca37e401b979eb19c3564979b769df4f694bbd86dca45743fda&hash_user_id="
        let pairs = try XCTUnwrap(FormEncoding.decode(recorded))
        let params = try ClientSecretParams(pairs: pairs)
        XCTAssertEqual(params.expires, "2016-10-11T13:59:16Z")
        XCTAssertEqual(params.hashUserID, "")
        XCTAssertEqual(params.query, recorded)
        XCTAssertNil(FormEncoding.decode("a=%4"))
        XCTAssertThrowsError(try ClientSecretParams(pairs: [("mobile", "1")]))
    }

    func testPass2AcceptsBooleanOrIntegerOTP() throws {
        let d = JSONDecoder()
        let a = try d.decode(Pass2Request.self, from: Data(#"{"pass":2,"OTP":true,"WID":"0","V":"04","mpin_id":"7b"}"#.utf8))
        XCTAssertTrue(a.OTP)
        let b = try d.decode(Pass2Request.self, from: Data(#"{"OTP":1,"WID":"0","V":"04","mpin_id":"7b"}"#.utf8))
        XCTAssertTrue(b.OTP)
        XCTAssertThrowsError(try d.decode(Pass2Request.self, from: Data(#"{"OTP":"x","WID":"0","V":"04","mpin_id":"7b"}"#.utf8)))
        XCTAssertThrowsError(try d.decode(Pass2Request.self, from: Data(#"{"WID":0,"V":"04","mpin_id":"7b"}"#.utf8)))
    }
}

private extension String {
    var leftPad6: String { count >= 6 ? self : String(repeating: "0", count: 6 - count) + self }
}
