import XCTest
import MPinCrypto

final class SecretBytesTests: XCTestCase {
    func testHoldsWhatItWasGiven() {
        let s = SecretBytes(copying: [1, 2, 3])
        XCTAssertEqual(s.count, 3)
        XCTAssertFalse(s.isEmpty)
        XCTAssertEqual(s.withUnsafeBytes { Array($0) }, [1, 2, 3])
        XCTAssertEqual(s.withTemporaryArray { $0 }, [1, 2, 3])
        let empty = SecretBytes()
        XCTAssertTrue(empty.isEmpty)
        XCTAssertEqual(empty.withUnsafeBytes { $0.count }, 0)
    }

    func testTakingEmptiesTheSource() {
        var source: [UInt8] = Array("1234".utf8)
        let s = SecretBytes(taking: &source)
        XCTAssertEqual(source, [])
        XCTAssertEqual(s.withUnsafeBytes { Array($0) }, Array("1234".utf8))
    }

    func testComparisonLooksAtEveryByte() {
        let a = SecretBytes(copying: Array("123456".utf8))
        XCTAssertTrue(a.hasSameBytes(as: SecretBytes(copying: Array("123456".utf8))))
        for i in 0..<6 {
            var other = Array("123456".utf8)
            other[i] ^= 1
            XCTAssertFalse(a.hasSameBytes(as: SecretBytes(copying: other)), "differs at byte \(i)")
        }
        XCTAssertFalse(a.hasSameBytes(as: SecretBytes(copying: Array("12345".utf8))))
        XCTAssertTrue(SecretBytes().hasSameBytes(as: SecretBytes(copying: [])))
    }

    func testTheSecretStepsMatchTheByteArrayOnes() throws {
        // The SecretBytes client steps are the byte-array ones, not a second implementation.
        let id = Array("alice@example.org".utf8)
        let s = try MPin.randomMasterSecret()
        let cs = try MPin.clientSecret(masterSecret: s, hashedID: MPin.hashID(id))
        let pin = SecretBytes(copying: "2468".utf8)
        let token = try MPin.extractPIN(mpinID: id, pin: pin, clientSecret: SecretBytes(copying: cs))
        XCTAssertEqual(token.withTemporaryArray { $0 },
                       try MPin.extractPIN(mpinID: id, pin: MPin.sdkPINValue(Array("2468".utf8)), clientSecret: cs))
        let x = try MPin.secretScalar()
        let p1 = try MPin.client1(date: 0, mpinID: id, x: x, pin: pin, token: token, timePermit: nil)
        let plain = try x.withTemporaryArray { xa in
            try MPin.client1(date: 0, mpinID: id, x: xa, pin: MPin.sdkPINValue(Array("2468".utf8)),
                             token: token.withTemporaryArray { $0 }, timePermit: nil)
        }
        XCTAssertEqual(p1.u, plain.u)
        XCTAssertEqual(p1.sec.withTemporaryArray { $0 }, plain.sec)
        let y = MPin.challenge(timeValue: 1, message: p1.u)
        XCTAssertEqual(try MPin.client2(x: x, y: y, sec: p1.sec),
                       try x.withTemporaryArray { xa in try MPin.client2(x: xa, y: y, sec: plain.sec) })
    }
}
