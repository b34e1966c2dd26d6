import MPinCrypto
import MPinVectorCheck
import XCTest

/// Decoders and M-Pin functions fed malformed input must throw a typed MPinCryptoError (or
/// return .invalidPoint), never trap.
final class MalformedInputTests: XCTestCase {
    static let pBytes = fieldPrime.bigEndianBytes
    static let g1Valid: [UInt8] = try! G1Point.generator.multiplied(by: UInt256(987_654_321)).encoded()
    static let g2Valid: [UInt8] = try! G2Point.generator.multiplied(by: UInt256(123_456_789)).encoded()

    // MARK: G1

    func testG1Lengths() {
        for n in [0, 1, 32, 33, 64, 66, 130] {
            let bytes = [UInt8](repeating: 0x04, count: n)
            assertThrows(.invalidLength(expected: 65, got: n), "G1 decode of \(n) bytes") { () throws(MPinCryptoError) in
                try G1Point(bytes: bytes)
            }
        }
        assertThrows(.invalidLength(expected: 65, got: 64), "G1 decode of a truncated valid point") {
            () throws(MPinCryptoError) in try G1Point(bytes: Self.g1Valid.dropLast())
        }
        assertThrows(.invalidLength(expected: 65, got: 66), "G1 decode of a valid point with a byte appended") {
            () throws(MPinCryptoError) in try G1Point(bytes: Self.g1Valid + [0])
        }
    }

    func testG1Prefix() {
        for prefix: UInt8 in [0x00, 0x01, 0x02, 0x03, 0x05, 0x06, 0x07, 0xff] {
            var bytes = Self.g1Valid
            bytes[0] = prefix
            assertThrows(.invalidPrefix, "G1 decode with prefix \(prefix)") { () throws(MPinCryptoError) in
                try G1Point(bytes: bytes)
            }
        }
        // Compressed form: only 0x02 and 0x03.
        let x = Array(Self.g1Valid[1..<33])
        for prefix: UInt8 in [0x00, 0x01, 0x04, 0xff] {
            assertThrows(.invalidPrefix, "G1 compressed decode with prefix \(prefix)") { () throws(MPinCryptoError) in
                try G1Point(compressedBytes: [prefix] + x)
            }
        }
        for n in [0, 1, 32, 34, 65] {
            let bytes = [UInt8](repeating: 0x02, count: n)
            assertThrows(.invalidLength(expected: 33, got: n), "G1 compressed decode of \(n) bytes") {
                () throws(MPinCryptoError) in try G1Point(compressedBytes: bytes)
            }
        }
    }

    func testG1NonCanonicalAndOffCurve() throws {
        // x = p, x = p + 1 (which reduces to 1), y = p + 1; and the non-canonical copy of a
        // valid point's coordinate (x + p fits in 256 bits).
        guard let (x, y) = G1Point.generator.multiplied(by: UInt256(42)).affine else { return XCTFail() }
        let (xPlusP, carry) = x.value.addingWithCarry(fieldPrime)
        XCTAssertEqual(carry, 0)
        let cases: [(String, [UInt8])] = [
            ("x = p", [0x04] + Self.pBytes + y.bytes),
            ("y = p", [0x04] + x.bytes + Self.pBytes),
            ("x + p for a valid point", [0x04] + xPlusP.bigEndianBytes + y.bytes),
            ("y = 2^256 − 1", [0x04] + x.bytes + [UInt8](repeating: 0xff, count: 32)),
        ]
        for (what, bytes) in cases {
            assertThrows(.nonCanonical, "G1 decode: \(what)") { () throws(MPinCryptoError) in try G1Point(bytes: bytes) }
        }
        assertThrows(.nonCanonical, "G1 compressed decode with x = p") { () throws(MPinCryptoError) in
            try G1Point(compressedBytes: [0x02] + Self.pBytes)
        }
        // Off the curve: a valid point with y + 1.
        let offCurve = [0x04] + x.bytes + (y + .one).bytes
        assertThrows(.notOnCurve, "G1 decode of an off-curve point") { () throws(MPinCryptoError) in
            try G1Point(bytes: offCurve)
        }
        assertThrows(.notOnCurve, "G1 decode of all-zero coordinates") { () throws(MPinCryptoError) in
            try G1Point(bytes: [0x04] + [UInt8](repeating: 0, count: 64))
        }
        assertThrows(nil, "G1 decode of 65 zero bytes") { () throws(MPinCryptoError) in
            try G1Point(bytes: [UInt8](repeating: 0, count: 65))
        }
        assertThrows(nil, "G1 decode of 65 0xff bytes") { () throws(MPinCryptoError) in
            try G1Point(bytes: [UInt8](repeating: 0xff, count: 65))
        }
        assertThrows(.nonCanonical, "G1 decode of 0x04 ‖ 64 0xff bytes") { () throws(MPinCryptoError) in
            try G1Point(bytes: [0x04] + [UInt8](repeating: 0xff, count: 64))
        }
        // A compressed x with no point: find an x where x³ + 2 is not a square.
        var nx = UInt64(1)
        while G1Point(x: Fp(nx), parity: 0) != nil { nx += 1 }
        let noPoint = [UInt8(0x02)] + Fp(nx).bytes
        assertThrows(.notOnCurve, "G1 compressed decode of x = \(nx) (no point)") { () throws(MPinCryptoError) in
            try G1Point(compressedBytes: noPoint)
        }
    }

    // MARK: G2

    func testG2Malformed() throws {
        for n in [0, 1, 64, 127, 129, 256] {
            let bytes = [UInt8](repeating: 0x01, count: n)
            assertThrows(.invalidLength(expected: 128, got: n), "G2 decode of \(n) bytes") { () throws(MPinCryptoError) in
                try G2Point(bytes: bytes)
            }
        }
        for k in 0..<4 {
            var bytes = Self.g2Valid
            bytes.replaceSubrange((32 * k)..<(32 * k + 32), with: Self.pBytes)
            assertThrows(.nonCanonical, "G2 decode with coordinate \(k) = p") { () throws(MPinCryptoError) in
                try G2Point(bytes: bytes)
            }
        }
        var offCurve = Self.g2Valid
        offCurve[127] ^= 1
        assertThrows(.notOnCurve, "G2 decode off the twist") { () throws(MPinCryptoError) in try G2Point(bytes: offCurve) }
        assertThrows(.notOnCurve, "G2 decode of all zeros") { () throws(MPinCryptoError) in
            try G2Point(bytes: [UInt8](repeating: 0, count: 128))
        }
        assertThrows(.nonCanonical, "G2 decode of all 0xff") { () throws(MPinCryptoError) in
            try G2Point(bytes: [UInt8](repeating: 0xff, count: 128))
        }
        // ECP21 of the first G2 vector: on the twist, outside G2.
        let blocks = parseVectorBlocks(try TestData.text("vectors/ecp2_test_vector_BN254CX.txt"))
        guard let first = blocks.first else { return XCTFail("no G2 vectors") }
        let (x, y) = try parseG2Coordinates(try first.field("ECP21"))
        let notInG2 = rawG2Encoding(x, y)
        assertThrows(.notInSubgroup, "G2 decode of ECP21") { () throws(MPinCryptoError) in try G2Point(bytes: notInG2) }
        XCTAssertEqual(MPin.server2(date: 0, hid: Self.g1Valid, htid: nil, y: [UInt8](repeating: 1, count: 32),
                                    serverSecret: notInG2, u: Self.g1Valid, ut: nil, v: Self.g1Valid),
                       .invalidPoint, "server secret outside G2")
        assertThrows(.notInSubgroup, "recombineG2 with a point outside G2") { () throws(MPinCryptoError) in
            try MPin.recombineG2(Self.g2Valid, notInG2)
        }
    }

    // MARK: Fp12

    func testFp12Malformed() {
        for n in [0, 1, 383, 385, 768] {
            let bytes = [UInt8](repeating: 0, count: n)
            assertThrows(.invalidLength(expected: 384, got: n), "Fp12 decode of \(n) bytes") { () throws(MPinCryptoError) in
                try Fp12(bytes: bytes)
            }
        }
        for k in [0, 5, 11] {
            var bytes = Fp12.one.bytes
            bytes.replaceSubrange((32 * k)..<(32 * k + 32), with: Self.pBytes)
            assertThrows(.nonCanonical, "Fp12 decode with coefficient \(k) = p") { () throws(MPinCryptoError) in
                try Fp12(bytes: bytes)
            }
        }
        assertThrows(.nonCanonical, "Fp12 decode of all 0xff") { () throws(MPinCryptoError) in
            try Fp12(bytes: [UInt8](repeating: 0xff, count: 384))
        }
        XCTAssertEqual(try Fp12(bytes: [UInt8](repeating: 0, count: 384)), .zero, "all-zero Fp12")
    }

    // MARK: M-Pin functions

    func testMPinFunctionsRejectGarbage() throws {
        let id = Array("alice@example.com".utf8)
        let scalar = [UInt8](repeating: 0x11, count: 32)
        let garbage: [[UInt8]] = [[], [0x04], [UInt8](repeating: 0, count: 65), [UInt8](repeating: 0xff, count: 65),
                                  [0x04] + Self.pBytes + Self.pBytes, Array(Self.g1Valid.dropLast())]
        for (i, g) in garbage.enumerated() {
            assertThrows(nil, "extractPIN with garbage \(i)") { () throws(MPinCryptoError) in
                try MPin.extractPIN(mpinID: id, pin: 1234, clientSecret: g)
            }
            assertThrows(nil, "restorePIN with garbage \(i)") { () throws(MPinCryptoError) in
                try MPin.restorePIN(mpinID: id, pin: 1234, token: g)
            }
            assertThrows(nil, "client1 with a garbage token \(i)") { () throws(MPinCryptoError) in
                try MPin.client1(date: 0, mpinID: id, x: scalar, pin: 1, token: g, timePermit: nil)
            }
            assertThrows(nil, "client1 with a garbage permit \(i)") { () throws(MPinCryptoError) in
                try MPin.client1(date: 17_000, mpinID: id, x: scalar, pin: 1, token: Self.g1Valid, timePermit: g)
            }
            assertThrows(nil, "client2 with a garbage SEC \(i)") { () throws(MPinCryptoError) in
                try MPin.client2(x: scalar, y: scalar, sec: g)
            }
            assertThrows(nil, "recombineG1 with garbage \(i) first") { () throws(MPinCryptoError) in
                try MPin.recombineG1(g, Self.g1Valid)
            }
            assertThrows(nil, "recombineG1 with garbage \(i) second") { () throws(MPinCryptoError) in
                try MPin.recombineG1(Self.g1Valid, g)
            }
            assertThrows(nil, "recombineG2 with garbage \(i)") { () throws(MPinCryptoError) in
                try MPin.recombineG2(Self.g2Valid, g + g)
            }
            for date: Int32 in [0, 17_000] {
                let result = MPin.server2(date: date, hid: g, htid: g, y: scalar, serverSecret: Self.g2Valid,
                                          u: g, ut: g, v: g)
                XCTAssertEqual(result, .invalidPoint, "server2 (date \(date)) with garbage points \(i)")
                let result2 = MPin.server2(date: date, hid: Self.g1Valid, htid: Self.g1Valid, y: scalar,
                                           serverSecret: Self.g2Valid, u: Self.g1Valid, ut: Self.g1Valid, v: g)
                XCTAssertEqual(result2, .invalidPoint, "server2 (date \(date)) with a garbage V \(i)")
            }
            XCTAssertEqual(MPin.server2(date: 0, hid: Self.g1Valid, htid: nil, y: scalar, serverSecret: g,
                                        u: Self.g1Valid, ut: nil, v: Self.g1Valid), .invalidPoint,
                           "server2 with a garbage server secret \(i)")
        }
        // Scalars of the wrong length.
        for n in [0, 31, 33] {
            let bad = [UInt8](repeating: 1, count: n)
            assertThrows(.invalidLength(expected: 32, got: n), "client1 with a \(n)-byte x") { () throws(MPinCryptoError) in
                try MPin.client1(date: 0, mpinID: id, x: bad, pin: 1, token: Self.g1Valid, timePermit: nil)
            }
            assertThrows(.invalidLength(expected: 32, got: n), "client2 with a \(n)-byte y") { () throws(MPinCryptoError) in
                try MPin.client2(x: scalar, y: bad, sec: Self.g1Valid)
            }
            assertThrows(.invalidLength(expected: 32, got: n), "serverSecret with a \(n)-byte share") {
                () throws(MPinCryptoError) in try MPin.serverSecret(masterSecret: bad)
            }
            assertThrows(.invalidLength(expected: 32, got: n), "clientSecret with a \(n)-byte share") {
                () throws(MPinCryptoError) in try MPin.clientSecret(masterSecret: bad, hashedID: scalar)
            }
            XCTAssertEqual(MPin.server2(date: 0, hid: Self.g1Valid, htid: nil, y: bad, serverSecret: Self.g2Valid,
                                        u: Self.g1Valid, ut: nil, v: Self.g1Valid), .invalidPoint, "server2 with a \(n)-byte y")
        }
        let hash31 = [UInt8](repeating: 7, count: 31)
        assertThrows(.invalidLength(expected: 32, got: 31), "clientSecret with a 31-byte hash") { () throws(MPinCryptoError) in
            try MPin.clientSecret(masterSecret: scalar, hashedID: hash31)
        }
        assertThrows(.invalidLength(expected: 32, got: 31), "timePermit with a 31-byte hash") { () throws(MPinCryptoError) in
            try MPin.timePermit(date: 17_000, masterSecret: scalar, hashedID: hash31)
        }
        for date: Int32 in [0, -1, Int32.min] {
            assertThrows(.invalidDate, "timePermit with date \(date)") { () throws(MPinCryptoError) in
                try MPin.timePermit(date: date, masterSecret: scalar, hashedID: scalar)
            }
        }
        assertThrows(.invalidDate, "server1 with a negative date") { () throws(MPinCryptoError) in
            try MPin.server1(date: -3, mpinID: id)
        }
        assertThrows(.invalidDate, "client1 with a negative date and a permit") { () throws(MPinCryptoError) in
            try MPin.client1(date: -3, mpinID: id, x: scalar, pin: 1, token: Self.g1Valid, timePermit: Self.g1Valid)
        }
        // Date ≠ 0 at the server but no HTID/UT: invalid point, not a crash.
        XCTAssertEqual(MPin.server2(date: 17_000, hid: Self.g1Valid, htid: nil, y: scalar, serverSecret: Self.g2Valid,
                                    u: Self.g1Valid, ut: nil, v: Self.g1Valid), .invalidPoint)
    }

    /// Results at infinity have no encoding and must be reported, not written as garbage.
    func testInfinityResults() throws {
        let id = Array("bob".utf8)
        let a = MPin.identityPoint(mpinID: id)
        // CS = 1234·A: extracting PIN 1234 would leave the point at infinity.
        let cs = try a.multiplied(by: UInt256(1234)).encoded()
        assertThrows(.pointAtInfinity, "extractPIN leaving infinity") { () throws(MPinCryptoError) in
            try MPin.extractPIN(mpinID: id, pin: 1234, clientSecret: cs)
        }
        // x + y ≡ 0 (mod r) in client2.
        let x = try SystemRandom.scalar()
        let y = (-Fr(UInt256(bigEndian: x)!)).bytes
        assertThrows(.pointAtInfinity, "client2 with x + y = r") { () throws(MPinCryptoError) in
            try MPin.client2(x: x, y: y, sec: Self.g1Valid)
        }
        // Master secret 0 gives infinity.
        assertThrows(.pointAtInfinity, "serverSecret(0)") { () throws(MPinCryptoError) in
            try MPin.serverSecret(masterSecret: [UInt8](repeating: 0, count: 32))
        }
        // P + (−P) in recombine.
        let neg = try (-(try G1Point(bytes: Self.g1Valid))).encoded()
        assertThrows(.pointAtInfinity, "recombineG1(P, −P)") { () throws(MPinCryptoError) in
            try MPin.recombineG1(Self.g1Valid, neg)
        }
    }

    // MARK: Random fuzzing

    func testRandomBytesIntoDecoders() throws {
        let interesting = [0, 1, 32, 33, 64, 65, 66, 127, 128, 129, 383, 384, 385]
        var accepted = (g1: 0, g1c: 0, g2: 0, fp12: 0)
        for i in 0..<400 {
            let length = i % 3 == 0 ? interesting[try randomInt(below: interesting.count)] : try randomInt(below: 400)
            var bytes = try randomBytes(length)
            // Half of the time give the G1 decoders a plausible prefix so the later checks run.
            if !bytes.isEmpty, i % 2 == 0 { bytes[0] = [0x02, 0x03, 0x04][i % 3] }
            do throws(MPinCryptoError) {
                let p = try G1Point(bytes: bytes)
                XCTAssertTrue(p.isOnCurve)
                accepted.g1 += 1
            } catch {
                assertDecodeError(error, input: bytes, allowed: [.invalidPrefix, .nonCanonical, .notOnCurve, .pointAtInfinity])
            }
            do throws(MPinCryptoError) {
                let p = try G1Point(compressedBytes: bytes)
                XCTAssertTrue(p.isOnCurve)
                XCTAssertEqual(Array(try p.encoded()[1..<33]), Array(bytes[1..<33]), "compressed x preserved")
                accepted.g1c += 1
            } catch {
                assertDecodeError(error, input: bytes, allowed: [.invalidPrefix, .nonCanonical, .notOnCurve, .pointAtInfinity])
            }
            do throws(MPinCryptoError) {
                let q = try G2Point(bytes: bytes)
                XCTAssertTrue(q.isOnCurve)
                accepted.g2 += 1
            } catch {
                assertDecodeError(error, input: bytes,
                                  allowed: [.invalidPrefix, .nonCanonical, .notOnCurve, .notInSubgroup, .pointAtInfinity])
            }
            do throws(MPinCryptoError) {
                let v = try Fp12(bytes: bytes)
                XCTAssertEqual(v.bytes, bytes, "Fp12 round trip of accepted bytes")
                accepted.fp12 += 1
            } catch {
                assertDecodeError(error, input: bytes, allowed: [.nonCanonical])
            }
            if i < 40 {
                let r = MPin.server2(date: Int32(i % 2), hid: bytes, htid: bytes, y: bytes, serverSecret: bytes,
                                     u: bytes, ut: bytes, v: bytes)
                XCTAssertEqual(r, .invalidPoint)
            }
        }
        // Random 65- and 128-byte strings are (with overwhelming probability) not points.
        XCTAssertEqual(accepted.g1, 0, "random 65-byte strings are not on the curve")
        XCTAssertEqual(accepted.g2, 0, "random 128-byte strings are not on the twist")
    }

    /// Random canonical x coordinates: about half are abscissas of curve points, and those
    /// decode to a point with the requested parity.
    func testRandomCompressedPoints() throws {
        var decoded = 0
        for _ in 0..<100 {
            var x = try randomBytes(32)
            x[0] &= 0x1f // below p
            let prefix = UInt8(0x02) | (x[31] & 1)
            do throws(MPinCryptoError) {
                let p = try G1Point(compressedBytes: [prefix] + x)
                XCTAssertTrue(p.isOnCurve)
                guard let (px, py) = p.affine else { XCTFail("infinity from a compressed point"); continue }
                XCTAssertEqual(px.bytes, x)
                XCTAssertEqual(UInt8(py.parity), prefix & 1)
                decoded += 1
            } catch {
                XCTAssertEqual(error, .notOnCurve)
            }
        }
        XCTAssertGreaterThan(decoded, 20, "about half of random x are on the curve")
        XCTAssertLessThan(decoded, 80, "about half of random x are on the curve")
    }
}

/// A decoder's refusal must be one of the decoding errors it can give: a wrong length naming the
/// input's actual length, or one of `allowed`.
func assertDecodeError(_ error: MPinCryptoError, input: [UInt8], allowed: [MPinCryptoError],
                       file: StaticString = #filePath, line: UInt = #line) {
    if case let .invalidLength(expected, got) = error {
        XCTAssertEqual(got, input.count, "the error names the input's length", file: file, line: line)
        XCTAssertNotEqual(expected, got, file: file, line: line)
        return
    }
    XCTAssertTrue(allowed.contains(error), "unexpected refusal: \(error)", file: file, line: line)
}
