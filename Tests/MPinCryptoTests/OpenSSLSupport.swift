import COpenSSL
import MPinCrypto

// Thin owners of OpenSSL objects for the differential tests: each class frees what it holds
// in deinit, so every BIGNUM, EC_POINT, EC_GROUP and BN_CTX created here is released.

struct OpenSSLError: Error, CustomStringConvertible {
    let description: String
    init(_ what: String) { description = "OpenSSL: \(what) failed" }
}

final class BNContext {
    let ptr: OpaquePointer
    init() throws {
        guard let c = BN_CTX_new() else { throw OpenSSLError("BN_CTX_new") }
        ptr = c
    }
    deinit { BN_CTX_free(ptr) }
}

final class BigNum {
    let ptr: OpaquePointer

    init() throws {
        guard let b = BN_new() else { throw OpenSSLError("BN_new") }
        ptr = b
    }

    /// From big-endian bytes.
    init(bytes: [UInt8]) throws {
        guard let b = bytes.withUnsafeBufferPointer({ BN_bin2bn($0.baseAddress, Int32($0.count), nil) }) else {
            throw OpenSSLError("BN_bin2bn")
        }
        ptr = b
    }

    convenience init(_ v: UInt256) throws { try self.init(bytes: v.bigEndianBytes) }

    deinit { BN_clear_free(ptr) }

    /// The value as 32 big-endian bytes (it must fit).
    func bytes32() throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        let n = out.withUnsafeMutableBufferPointer { BN_bn2binpad(ptr, $0.baseAddress, 32) }
        guard n == 32 else { throw OpenSSLError("BN_bn2binpad") }
        return out
    }

    func uint256() throws -> UInt256 { UInt256(bigEndian: try bytes32())! }
}

/// y² = x³ + 2 over Fp with generator (p − 1, 1), order r, cofactor 1, built in OpenSSL.
final class OpenSSLCurve {
    let ctx: BNContext
    let group: OpaquePointer

    init() throws {
        ctx = try BNContext()
        let p = try BigNum(fieldPrime), a = try BigNum(UInt256(0)), b = try BigNum(UInt256(2))
        guard let g = EC_GROUP_new_curve_GFp(p.ptr, a.ptr, b.ptr, ctx.ptr) else {
            throw OpenSSLError("EC_GROUP_new_curve_GFp")
        }
        group = g
        let (pMinus1, _) = fieldPrime.subtractingWithBorrow(UInt256(1))
        let generator = try point(x: pMinus1, y: UInt256(1))
        let order = try BigNum(groupOrder), cofactor = try BigNum(UInt256(1))
        guard EC_GROUP_set_generator(group, generator.ptr, order.ptr, cofactor.ptr) == 1 else {
            throw OpenSSLError("EC_GROUP_set_generator")
        }
    }

    deinit { EC_GROUP_free(group) }

    final class Point {
        let ptr: OpaquePointer
        init(group: OpaquePointer) throws {
            guard let p = EC_POINT_new(group) else { throw OpenSSLError("EC_POINT_new") }
            ptr = p
        }
        deinit { EC_POINT_free(ptr) }
    }

    func newPoint() throws -> Point { try Point(group: group) }

    func point(x: UInt256, y: UInt256) throws -> Point {
        let pt = try newPoint()
        let bx = try BigNum(x), by = try BigNum(y)
        guard EC_POINT_set_affine_coordinates(group, pt.ptr, bx.ptr, by.ptr, ctx.ptr) == 1 else {
            throw OpenSSLError("EC_POINT_set_affine_coordinates")
        }
        return pt
    }

    func point(_ p: G1Point) throws -> Point {
        guard let (x, y) = p.affine else {
            let pt = try newPoint()
            guard EC_POINT_set_to_infinity(group, pt.ptr) == 1 else { throw OpenSSLError("EC_POINT_set_to_infinity") }
            return pt
        }
        return try point(x: x.value, y: y.value)
    }

    /// Affine coordinates, or nil at infinity.
    func affine(_ pt: Point) throws -> (x: UInt256, y: UInt256)? {
        if EC_POINT_is_at_infinity(group, pt.ptr) == 1 { return nil }
        let x = try BigNum(), y = try BigNum()
        guard EC_POINT_get_affine_coordinates(group, pt.ptr, x.ptr, y.ptr, ctx.ptr) == 1 else {
            throw OpenSSLError("EC_POINT_get_affine_coordinates")
        }
        return (try x.uint256(), try y.uint256())
    }

    func isOnCurve(_ pt: Point) -> Bool { EC_POINT_is_on_curve(group, pt.ptr, ctx.ptr) == 1 }

    /// k·G with OpenSSL's generator.
    func mulGenerator(_ k: UInt256) throws -> Point {
        let r = try newPoint(), bk = try BigNum(k)
        guard EC_POINT_mul(group, r.ptr, bk.ptr, nil, nil, ctx.ptr) == 1 else { throw OpenSSLError("EC_POINT_mul") }
        return r
    }

    func mul(_ p: Point, _ k: UInt256) throws -> Point {
        let r = try newPoint(), bk = try BigNum(k)
        guard EC_POINT_mul(group, r.ptr, nil, p.ptr, bk.ptr, ctx.ptr) == 1 else { throw OpenSSLError("EC_POINT_mul") }
        return r
    }

    func add(_ a: Point, _ b: Point) throws -> Point {
        let r = try newPoint()
        guard EC_POINT_add(group, r.ptr, a.ptr, b.ptr, ctx.ptr) == 1 else { throw OpenSSLError("EC_POINT_add") }
        return r
    }

    func dbl(_ a: Point) throws -> Point {
        let r = try newPoint()
        guard EC_POINT_dbl(group, r.ptr, a.ptr, ctx.ptr) == 1 else { throw OpenSSLError("EC_POINT_dbl") }
        return r
    }

    func negate(_ a: Point) throws -> Point {
        let r = try newPoint()
        guard EC_POINT_copy(r.ptr, a.ptr) == 1, EC_POINT_invert(group, r.ptr, ctx.ptr) == 1 else {
            throw OpenSSLError("EC_POINT_invert")
        }
        return r
    }
}

/// Modular arithmetic on BIGNUMs, as a reference for Fp and Fr.
enum OpenSSLMod {
    static func mul(_ a: UInt256, _ b: UInt256, _ m: UInt256, _ ctx: BNContext) throws -> UInt256 {
        let r = try BigNum(), ba = try BigNum(a), bb = try BigNum(b), bm = try BigNum(m)
        guard BN_mod_mul(r.ptr, ba.ptr, bb.ptr, bm.ptr, ctx.ptr) == 1 else { throw OpenSSLError("BN_mod_mul") }
        return try r.uint256()
    }

    static func reduce(_ a: UInt256, _ m: UInt256, _ ctx: BNContext) throws -> UInt256 {
        let r = try BigNum(), ba = try BigNum(a), bm = try BigNum(m)
        guard BN_nnmod(r.ptr, ba.ptr, bm.ptr, ctx.ptr) == 1 else { throw OpenSSLError("BN_nnmod") }
        return try r.uint256()
    }

    static func inverse(_ a: UInt256, _ m: UInt256, _ ctx: BNContext) throws -> UInt256 {
        let r = try BigNum(), ba = try BigNum(a), bm = try BigNum(m)
        guard BN_mod_inverse(r.ptr, ba.ptr, bm.ptr, ctx.ptr) != nil else { throw OpenSSLError("BN_mod_inverse") }
        return try r.uint256()
    }

    static func power(_ a: UInt256, _ e: UInt256, _ m: UInt256, _ ctx: BNContext) throws -> UInt256 {
        let r = try BigNum(), ba = try BigNum(a), be = try BigNum(e), bm = try BigNum(m)
        guard BN_mod_exp(r.ptr, ba.ptr, be.ptr, bm.ptr, ctx.ptr) == 1 else { throw OpenSSLError("BN_mod_exp") }
        return try r.uint256()
    }

    /// The 512-bit big-endian integer hi ‖ lo reduced mod m.
    static func reduceWide(_ bytes: [UInt8], _ m: UInt256, _ ctx: BNContext) throws -> UInt256 {
        let r = try BigNum(), ba = try BigNum(bytes: bytes), bm = try BigNum(m)
        guard BN_nnmod(r.ptr, ba.ptr, bm.ptr, ctx.ptr) == 1 else { throw OpenSSLError("BN_nnmod") }
        return try r.uint256()
    }
}

/// OpenSSL's one-shot SHA-256.
func openSSLSHA256(_ data: [UInt8]) -> [UInt8] {
    var md = [UInt8](repeating: 0, count: 32)
    // A non-empty buffer so the data pointer is never null, even for empty input.
    let input = data.isEmpty ? [UInt8(0)] : data
    input.withUnsafeBufferPointer { inp in
        md.withUnsafeMutableBufferPointer { out in
            _ = COpenSSL.SHA256(inp.baseAddress, data.count, out.baseAddress)
        }
    }
    return md
}
