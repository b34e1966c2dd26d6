import MPinCrypto
import MPinVectorCheck
import XCTest

/// End-to-end M-Pin runs on random identities, master-secret shares and PINs.
final class MPinProtocolTests: XCTestCase {
    /// Everything the two D-TAs issue for one random identity.
    struct Setup {
        let mpinID: [UInt8]
        let hashedID: [UInt8]
        let serverSecret: [UInt8]
        let clientSecret: [UInt8]
        let date: Int32
        let timePermit: [UInt8]
        let pin: Int32
        let token: [UInt8]
    }

    private func makeSetup(date: Int32 = 19_876) throws -> Setup {
        let mpinID = Array("{\"userID\": \"user-\(hexString(try randomBytes(6)))@example.com\", \"mobile\": 1}".utf8)
        let hashedID = MPin.hashID(mpinID)
        let ms1 = try MPin.randomMasterSecret(), ms2 = try MPin.randomMasterSecret()
        let ss = try MPin.recombineG2(try MPin.serverSecret(masterSecret: ms1), try MPin.serverSecret(masterSecret: ms2))
        let cs = try MPin.recombineG1(try MPin.clientSecret(masterSecret: ms1, hashedID: hashedID),
                                      try MPin.clientSecret(masterSecret: ms2, hashedID: hashedID))
        let tp = try MPin.recombineG1(try MPin.timePermit(date: date, masterSecret: ms1, hashedID: hashedID),
                                      try MPin.timePermit(date: date, masterSecret: ms2, hashedID: hashedID))
        let pin = Int32(try randomInt(below: 10_000))
        let token = try MPin.extractPIN(mpinID: mpinID, pin: pin, clientSecret: cs)

        // The recombined secrets are (s1 + s2) times the base points.
        let s = Fr(UInt256(bigEndian: ms1)!) + Fr(UInt256(bigEndian: ms2)!)
        XCTAssertEqual(ss, try G2Point.generator.multiplied(by: s.value).encoded(), "SERVER_SECRET = s·Q")
        XCTAssertEqual(cs, try MPin.identityPoint(mpinID: mpinID).multiplied(by: s.value).encoded(), "CLIENT_SECRET = s·A")
        XCTAssertEqual(tp, try MPin.datePoint(date: date, hashedID: hashedID).multiplied(by: s.value).encoded(),
                       "TIME_PERMIT = s·T")
        return Setup(mpinID: mpinID, hashedID: hashedID, serverSecret: ss, clientSecret: cs, date: date,
                     timePermit: tp, pin: pin, token: token)
    }

    /// One two-pass authentication: client with `clientDate`/`pin`, server with `serverDate`.
    private func authenticate(_ s: Setup, pin: Int32, clientDate: Int32, serverDate: Int32,
                              permit: Bool) throws -> MPin.ServerResult {
        let x = try SystemRandom.scalar()
        let pass1 = try MPin.client1(date: clientDate, mpinID: s.mpinID, x: x, pin: pin, token: s.token,
                                     timePermit: permit ? s.timePermit : nil)
        if clientDate == 0 {
            XCTAssertNil(pass1.ut, "no UT without a date")
        } else {
            XCTAssertEqual(pass1.ut?.count, 65, "UT whenever date ≠ 0, permit or not (docs/CRYPTO.md §6.1)")
        }
        let server1 = try MPin.server1(date: serverDate, mpinID: s.mpinID)
        let y = try SystemRandom.scalar()
        let v = try MPin.client2(x: x, y: y, sec: pass1.sec)
        let result = MPin.server2(date: serverDate, hid: server1.hid, htid: server1.htid, y: y,
                                  serverSecret: s.serverSecret, u: pass1.u, ut: pass1.ut, v: v)
        // The server's way, with the secret's lines prepared once, must give the same answer.
        let prepared = PreparedG2(try G2Point(bytes: s.serverSecret))
        XCTAssertEqual(MPin.server2(date: serverDate, hid: server1.hid, htid: server1.htid, y: y,
                                    serverSecret: prepared, u: pass1.u, ut: pass1.ut, v: v), result, "prepared server secret")
        return result
    }

    func testTwoPassWithTimePermit() throws {
        let s = try makeSetup()
        XCTAssertEqual(try authenticate(s, pin: s.pin, clientDate: s.date, serverDate: s.date, permit: true), .ok)
    }

    func testTwoPassWithoutTimePermit() throws {
        let s = try makeSetup()
        XCTAssertEqual(try authenticate(s, pin: s.pin, clientDate: 0, serverDate: 0, permit: false), .ok)
        let server1 = try MPin.server1(date: 0, mpinID: s.mpinID)
        XCTAssertNil(server1.htid, "HTID is absent for date 0")
        XCTAssertEqual(server1.hid, try MPin.identityPoint(mpinID: s.mpinID).encoded())
    }

    func testWrongPINIsRejected() throws {
        let s = try makeSetup()
        let wrong = (s.pin + 1 + Int32(try randomInt(below: 9_998))) % 10_000
        XCTAssertEqual(try authenticate(s, pin: wrong, clientDate: s.date, serverDate: s.date, permit: true), .badPIN)
        XCTAssertEqual(try authenticate(s, pin: wrong, clientDate: 0, serverDate: 0, permit: false), .badPIN)
    }

    func testWrongDateIsRejected() throws {
        let s = try makeSetup()
        XCTAssertEqual(try authenticate(s, pin: s.pin, clientDate: s.date, serverDate: s.date + 1, permit: true), .badPIN)
        // A permit for one day presented as another day's.
        XCTAssertEqual(try authenticate(s, pin: s.pin, clientDate: s.date - 1, serverDate: s.date - 1, permit: true), .badPIN)
    }

    func testServerWithDecodedSecret() throws {
        let s = try makeSetup()
        let ss = try G2Point(bytes: s.serverSecret)
        let x = try SystemRandom.scalar(), y = try SystemRandom.scalar()
        let pass1 = try MPin.client1(date: s.date, mpinID: s.mpinID, x: x, pin: s.pin, token: s.token, timePermit: s.timePermit)
        let v = try MPin.client2(x: x, y: y, sec: pass1.sec)
        let server1 = try MPin.server1(date: s.date, mpinID: s.mpinID)
        XCTAssertEqual(MPin.server2(date: s.date, hid: server1.hid, htid: server1.htid, y: y, serverSecret: ss,
                                    u: pass1.u, ut: pass1.ut, v: v), .ok)
        // A different y than the one V was made with fails.
        let y2 = try SystemRandom.scalar()
        XCTAssertEqual(MPin.server2(date: s.date, hid: server1.hid, htid: server1.htid, y: y2, serverSecret: ss,
                                    u: pass1.u, ut: pass1.ut, v: v), .badPIN)
    }

    func testOnePass() throws {
        let s = try makeSetup()
        let x = try SystemRandom.scalar()
        let timeValue: Int32 = 1_700_000_000
        let message = Array("hello".utf8)
        let r = try MPin.client(date: s.date, mpinID: s.mpinID, x: x, pin: s.pin, token: s.token,
                                timePermit: s.timePermit, message: message, timeValue: timeValue)
        guard let ut = r.ut else { return XCTFail("one-pass client with a permit returned no UT") }
        XCTAssertEqual(r.y, MPin.challenge(timeValue: timeValue, message: ut + message), "y = H(time ‖ UT ‖ message)")
        let server1 = try MPin.server1(date: s.date, mpinID: s.mpinID)
        XCTAssertEqual(MPin.server2(date: s.date, hid: server1.hid, htid: server1.htid, y: r.y,
                                    serverSecret: s.serverSecret, u: r.u, ut: r.ut, v: r.v), .ok)

        // Without a permit: y is derived from U.
        let r0 = try MPin.client(date: 0, mpinID: s.mpinID, x: x, pin: s.pin, token: s.token,
                                 timePermit: nil, timeValue: timeValue)
        XCTAssertNil(r0.ut)
        XCTAssertEqual(r0.y, MPin.challenge(timeValue: timeValue, message: r0.u))
        let server0 = try MPin.server1(date: 0, mpinID: s.mpinID)
        XCTAssertEqual(MPin.server2(date: 0, hid: server0.hid, htid: nil, y: r0.y,
                                    serverSecret: s.serverSecret, u: r0.u, ut: nil, v: r0.v), .ok)

        // A wrong PIN in one pass.
        let bad = try MPin.client(date: s.date, mpinID: s.mpinID, x: x, pin: (s.pin + 1) % 10_000, token: s.token,
                                  timePermit: s.timePermit, timeValue: timeValue)
        XCTAssertEqual(MPin.server2(date: s.date, hid: server1.hid, htid: server1.htid, y: bad.y,
                                    serverSecret: s.serverSecret, u: bad.u, ut: bad.ut, v: bad.v), .badPIN)
    }

    func testExtractAndRestorePIN() throws {
        let s = try makeSetup()
        XCTAssertNotEqual(s.token, s.clientSecret, "the token differs from the client secret for pin ≠ 0")
        XCTAssertEqual(try MPin.restorePIN(mpinID: s.mpinID, pin: s.pin, token: s.token), s.clientSecret)
        // TOKEN = CS − pin·A.
        let a = MPin.identityPoint(mpinID: s.mpinID)
        let expected = try G1Point(bytes: s.clientSecret) - a.multiplied(by: UInt256(UInt64(s.pin)))
        XCTAssertEqual(s.token, try expected.encoded())
        // Restoring with another PIN gives a different point.
        XCTAssertNotEqual(try MPin.restorePIN(mpinID: s.mpinID, pin: (s.pin + 1) % 10_000, token: s.token), s.clientSecret)
        // PIN 0 leaves the secret unchanged.
        XCTAssertEqual(try MPin.extractPIN(mpinID: s.mpinID, pin: 0, clientSecret: s.clientSecret), s.clientSecret)
        // Negative PINs: the multiplier of −1 is 16383.
        let tokenNeg = try MPin.extractPIN(mpinID: s.mpinID, pin: -1, clientSecret: s.clientSecret)
        let expectedNeg = try G1Point(bytes: s.clientSecret) - a.multiplied(by: UInt256(16383))
        XCTAssertEqual(tokenNeg, try expectedNeg.encoded())
        XCTAssertEqual(try MPin.restorePIN(mpinID: s.mpinID, pin: -1, token: tokenNeg), s.clientSecret)
    }

    /// Date ≠ 0 without a permit: UT is still produced (Milagro skips only SEC + TP), and the
    /// server, which requires the permit, rejects the PIN check rather than the encoding.
    func testDateWithoutPermitProducesUTAndIsRejected() throws {
        let s = try makeSetup()
        XCTAssertEqual(try authenticate(s, pin: s.pin, clientDate: s.date, serverDate: s.date, permit: false), .badPIN)
        XCTAssertThrowsError(try MPin.client1(date: -1, mpinID: s.mpinID, x: try SystemRandom.scalar(), pin: s.pin,
                                              token: s.token, timePermit: nil)) { error in
            XCTAssertEqual(error as? MPinCryptoError, .invalidDate)
        }
    }

    /// The branch-free PIN reduction agrees with C's truncating `%` and a 14-bit mask.
    func testPINMultiplierMatchesTruncatingRemainder() throws {
        var values: [Int32] = [0, 1, -1, 9_999, 10_000, -10_000, 16_383, 16_384, .max, .min, .min + 1]
        let random = try SystemRandom.bytes(4 * 2_000)
        for i in 0..<2_000 {
            values.append(Int32(bitPattern: UInt32(random[4 * i]) << 24 | UInt32(random[4 * i + 1]) << 16
                                | UInt32(random[4 * i + 2]) << 8 | UInt32(random[4 * i + 3])))
        }
        for v in values {
            XCTAssertEqual(MPin.pinMultiplier(v), UInt64(UInt32(bitPattern: v % 10_000) & 0x3FFF), "pin \(v)")
        }
    }

    func testSDKPINValueAndMultiplier() {
        let table: [(String, Int32, UInt64)] = [
            ("1234", 1_509_442, 9442),
            ("0000", 1_477_632, 7632),
            ("9999", 1_754_688, 4688),
            ("123456", 1_450_575_459, 5459),
            ("12345678", -1_861_353_340, 13044),
        ]
        for (pin, hash, multiplier) in table {
            let value = MPin.sdkPINValue(Array(pin.utf8))
            XCTAssertEqual(value, hash, "sdkPINValue(\"\(pin)\")")
            XCTAssertEqual(MPin.pinMultiplier(value), multiplier, "pinMultiplier of \"\(pin)\"")
        }
        XCTAssertEqual(MPin.pinMultiplier(-1), 16383)
        XCTAssertEqual(MPin.pinMultiplier(-3340), 13044)
        XCTAssertEqual(MPin.pinMultiplier(0), 0)
        XCTAssertEqual(MPin.pinMultiplier(9999), 9999)
        XCTAssertEqual(MPin.pinMultiplier(10_000), 0)
        XCTAssertEqual(MPin.pinMultiplier(Int32.max), UInt64(Int32.max % 10_000))
        // −2147483648 % 10000 = −3648 (C truncation), and −3648 mod 2^14 = 12736.
        XCTAssertEqual(MPin.pinMultiplier(Int32.min), 12736)
        XCTAssertEqual(MPin.sdkPINValue([UInt8]()), 0)
        // Bytes are taken as signed: 0xff counts as −1.
        XCTAssertEqual(MPin.sdkPINValue([0xff]), -1)
        XCTAssertEqual(MPin.sdkPINValue([0x31, 0xc3]), 49 &* 31 &+ Int32(Int8(bitPattern: 0xc3)))
    }

    func testHashHelpers() {
        let id = Array("someone".utf8)
        let h = MPin.hashID(id)
        XCTAssertEqual(h, SHA256.hash(id))
        XCTAssertEqual(MPin.hashDate(0, hashedID: h), SHA256.hash(h), "no prefix for date 0")
        XCTAssertEqual(MPin.hashDate(-5, hashedID: h), SHA256.hash(h), "no prefix for a negative date")
        XCTAssertEqual(MPin.hashDate(0x0102_0304, hashedID: h), SHA256.hash([1, 2, 3, 4] + h), "big-endian date prefix")
        // The one-pass challenge is reduced mod r.
        let y = MPin.challenge(timeValue: 0, message: id)
        XCTAssertEqual(y.count, 32)
        let yv = UInt256(bigEndian: y)!
        XCTAssertNotEqual(yv.lessThanMask(groupOrder), 0, "challenge < r")
        XCTAssertEqual(Fr(yv), Fr(UInt256(bigEndian: SHA256.hash(id))!))
    }
}
