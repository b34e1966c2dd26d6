import COpenSSL
import MPinCrypto
import MPinVectorCheck
import XCTest

/// G1 arithmetic and SHA-256 against OpenSSL's libcrypto.
final class OpenSSLDifferentialTests: XCTestCase {
    private func assertSame(_ ours: G1Point, _ theirs: OpenSSLCurve.Point, _ curve: OpenSSLCurve, _ what: String,
                            file: StaticString = #filePath, line: UInt = #line) throws {
        let expected = try curve.affine(theirs)
        let got = ours.affine.map { ($0.x.value, $0.y.value) }
        switch (got, expected) {
        case (nil, nil): break
        case let (g?, e?):
            if g.0 != e.x || g.1 != e.y {
                XCTFail("\(what): OpenSSL \(hexString(e.x.bigEndianBytes)):\(hexString(e.y.bigEndianBytes)), ours \(describe(ours))",
                        file: file, line: line)
            }
        default:
            XCTFail("\(what): OpenSSL \(expected == nil ? "infinity" : "finite"), ours \(describe(ours))", file: file, line: line)
        }
    }

    func testCurveSetup() throws {
        let curve = try OpenSSLCurve()
        XCTAssertEqual(EC_GROUP_check(curve.group, curve.ctx.ptr), 1, "OpenSSL accepts the group (generator of order r)")
        let g = try curve.mulGenerator(UInt256(1))
        try assertSame(G1Point.generator, g, curve, "generator")
        let inf = try curve.mulGenerator(groupOrder)
        XCTAssertEqual(EC_POINT_is_at_infinity(curve.group, inf.ptr), 1, "r·G = O in OpenSSL")
    }

    func testScalarMultiplication() throws {
        let curve = try OpenSSLCurve()
        var scalars = [UInt256(1), UInt256(2), UInt256(3), UInt256(0xffff_ffff_ffff_ffff)]
        let (rMinus1, _) = groupOrder.subtractingWithBorrow(UInt256(1))
        scalars.append(rMinus1)
        for _ in 0..<20 { scalars.append(try randomFr().value) }
        // Full 256-bit scalars (not reduced mod r) as well.
        for _ in 0..<3 { scalars.append(UInt256(bigEndian: try randomBytes(32))!) }
        for k in scalars {
            let ours = G1Point.generator.multiplied(by: k)
            try assertSame(ours, try curve.mulGenerator(k), curve, "k·G for k = \(hexString(k.bigEndianBytes))")
        }
        // Multiplying a non-generator point, and the 14-bit ladder.
        let base = G1Point.generator.multiplied(by: try randomFr().value)
        let theirsBase = try curve.point(base)
        XCTAssertTrue(curve.isOnCurve(theirsBase))
        for _ in 0..<5 {
            let k = try randomFr().value
            try assertSame(base.multiplied(by: k), try curve.mul(theirsBase, k), curve, "k·P")
            let small = UInt64(try randomInt(below: 1 << 14))
            try assertSame(base.multiplied(bySmall: small, bits: 14), try curve.mul(theirsBase, UInt256(small)), curve,
                           "\(small)·P by the ladder")
        }
    }

    func testAdditionAndDoubling() throws {
        let curve = try OpenSSLCurve()
        for i in 0..<20 {
            let p = G1Point.generator.multiplied(by: try randomFr().value)
            let q = G1Point.generator.multiplied(by: try randomFr().value)
            let op = try curve.point(p), oq = try curve.point(q)
            try assertSame(p + q, try curve.add(op, oq), curve, "P + Q (\(i))")
            try assertSame(p - q, try curve.add(op, try curve.negate(oq)), curve, "P − Q (\(i))")
            try assertSame(p.doubled, try curve.dbl(op), curve, "2P (\(i))")
            try assertSame(p + p, try curve.dbl(op), curve, "P + P (\(i))")
            try assertSame(-p, try curve.negate(op), curve, "−P (\(i))")
            try assertSame(p + (-p), try curve.add(op, try curve.negate(op)), curve, "P + (−P) (\(i))")
            try assertSame(p + .infinity, op, curve, "P + O (\(i))")
            // Mixed projective representatives: scale Q's coordinates by a random z.
            let z = Fp(try randomFr().value)
            if !z.isZero {
                let q2 = G1Point(x: q.x * z, y: q.y * z, z: q.z * z)
                try assertSame(p + q2, try curve.add(op, oq), curve, "P + Q with Z ≠ 1 (\(i))")
            }
        }
    }

    func testSHA256AgainstOpenSSL() throws {
        var lengths = Array(0...200)
        lengths += [255, 256, 1000, 4096]
        for n in lengths {
            let data = try randomBytes(n)
            let expected = openSSLSHA256(data)
            XCTAssertEqual(SHA256.hash(data), expected, "SHA-256 of \(n) random bytes")
            // Incremental updates split at a random point give the same digest.
            let cut = n == 0 ? 0 : try randomInt(below: n + 1)
            var h = SHA256()
            h.update(data[..<cut])
            h.update(data[cut...])
            XCTAssertEqual(h.finalize(), expected, "SHA-256 of \(n) bytes in two updates (cut \(cut))")
            // Input that is not contiguous (a lazy sequence) takes the byte-at-a-time path, alone
            // and mixed with contiguous updates.
            var lazy = SHA256()
            lazy.update(data[..<cut].lazy.map { $0 })
            lazy.update(data[cut...])
            XCTAssertEqual(lazy.finalize(), expected, "SHA-256 of \(n) bytes, a lazy sequence then contiguous (cut \(cut))")
            var lazyAfter = SHA256()
            lazyAfter.update(data[..<cut])
            lazyAfter.update(data[cut...].lazy.map { $0 })
            XCTAssertEqual(lazyAfter.finalize(), expected, "SHA-256 of \(n) bytes, contiguous then a lazy sequence (cut \(cut))")
        }
        // Known answers (FIPS 180-2): "abc" and the empty string.
        XCTAssertEqual(hexString(SHA256.hash(Array("abc".utf8))),
                       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(hexString(SHA256.hash([UInt8]())),
                       "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }
}
