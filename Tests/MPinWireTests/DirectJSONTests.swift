import XCTest
import MPinJSON
import MPinWire

/// The login answers that write their own JSON (`DirectJSONEncodable`) give exactly the bytes
/// of the generic encoder, which the recorded SDK traffic and the clients are tested against:
/// every optional present and absent, and strings that need escapes.
final class DirectJSONTests: XCTestCase {
    private let strings = ["", "OK", "a\"b\\c", "line\nnext\ttab\r", "\u{01}\u{1f}\u{08}\u{0c}", "é€😀", "/slash"]

    private func assertSameBytes<T: DirectJSONEncodable>(_ message: T, file: StaticString = #filePath, line: UInt = #line) throws {
        let generic = try WireCoding.encode(message)
        XCTAssertEqual(String(decoding: message.jsonBytes, as: UTF8.self), String(decoding: generic, as: UTF8.self),
                       file: file, line: line)
    }

    func testPass1AnswerBytes() throws {
        for y in strings {
            try assertSameBytes(Pass1Response(y: y))
            try assertSameBytes(Pass1Response(y: y, pass1Id: y + "00ff"))
        }
        var odd = Pass1Response(y: "ab", pass1Id: nil)
        odd.pass = -7
        try assertSameBytes(odd)
    }

    func testPass2AnswerBytes() throws {
        for s in strings {
            try assertSameBytes(Pass2Response(authOTT: s))
            try assertSameBytes(Pass2Response(authOTT: "00" + s, otp: s))
        }
    }

    func testFinalStepAnswerBytes() throws {
        let timing = OTPTiming(expireTime: 1_764_000_000_123, ttlSeconds: 0, nowTime: Int64.min)
        for s in strings {
            try assertSameBytes(RPAAuthenticateResponse(someUserData: s))
            try assertSameBytes(RPAAuthenticateResponse(someUserData: s, otpTiming: timing, verdictSignature: s))
            try assertSameBytes(RPAAuthenticateResponse(someUserData: s, verdictSignature: "sig" + s))
            try assertSameBytes(RPAAuthenticateResponse(someUserData: s, verdictSignature: "sig",
                                                        attempts: SignedCount(count: 2, signature: "a" + s)))
        }
    }

    func testTheWriterWritesWhatItIsGiven() {
        var w = JSONObjectWriter()
        w.member("a", "x\"y")
        w.member("b", nil as String?)
        w.member("c", 42)
        w.member("d", false)
        w.member("e", nil as Int?)
        XCTAssertEqual(String(decoding: w.finish(), as: UTF8.self), #"{"a":"x\"y","c":42,"d":false}"#)
        var empty = JSONObjectWriter()
        XCTAssertEqual(String(decoding: empty.finish(), as: UTF8.self), "{}")
    }
}
