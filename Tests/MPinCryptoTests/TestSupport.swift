import Foundation
import MPinCrypto
import MPinReferenceData
import MPinVectorCheck
import XCTest

// Shared helpers for the MPinCrypto tests: locating the reference data, parsing the Milagro
// vector files, and comparing points and field elements with readable failure messages.

enum TestData {
    /// The package root.
    static var packageRoot: URL { ReferenceData.packageRoot }

    /// The path of a reference file (see ReferenceData: skipped when the reference data is
    /// absent, a failure when it is there without the file).
    static func path(_ relative: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        try ReferenceData.path(relative, file: file, line: line)
    }

    static func text(_ relative: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        try ReferenceData.text(relative, file: file, line: line)
    }
}

struct ParseError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

// MARK: Vector file parsing

/// One `#testN` block of a Milagro arithmetic vector file: NAME = VALUE lines.
struct VectorBlock {
    let number: Int
    var fields: [String: String]

    func field(_ name: String) throws -> String {
        guard let v = fields[name] else { throw ParseError("test \(number): field \(name) missing") }
        return v
    }
}

/// The ten `#test` blocks of one of Milagro's BN254CX arithmetic vector files
/// (`vectors/NAME_test_vector_BN254CX.txt`); fewer or more is a test failure.
func milagroVectorBlocks(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws -> [VectorBlock] {
    let blocks = parseVectorBlocks(try TestData.text("vectors/\(name)_test_vector_BN254CX.txt"))
    XCTAssertEqual(blocks.count, 10, "number of test blocks in \(name)", file: file, line: line)
    return blocks
}

/// Splits a vector file into blocks. A block starts at a comment line containing "test"
/// followed by a number ("#test3", "# test 3"); other comment lines are ignored.
func parseVectorBlocks(_ text: String) -> [VectorBlock] {
    var blocks = [VectorBlock]()
    for rawLine in text.split(whereSeparator: \.isNewline) {
        let line = rawLine.trimmingCharacters(in: .whitespaces)
        if line.isEmpty { continue }
        if line.hasPrefix("#") {
            let body = line.dropFirst().trimmingCharacters(in: .whitespaces)
            if body.hasPrefix("test") {
                let digits = body.dropFirst(4).trimmingCharacters(in: .whitespaces)
                if let n = Int(digits) { blocks.append(VectorBlock(number: n, fields: [:])) }
            }
            continue
        }
        guard let eq = line.firstIndex(of: "="), !blocks.isEmpty else { continue }
        let name = line[..<eq].trimmingCharacters(in: .whitespaces)
        let value = line[line.index(after: eq)...].trimmingCharacters(in: .whitespaces)
        blocks[blocks.count - 1].fields[name] = value
    }
    return blocks
}

/// An integer written in hex, possibly with leading zero digits dropped.
func bigInt(_ hex: String) throws -> UInt256 {
    var digits = Substring(hex.trimmingCharacters(in: .whitespaces))
    if digits.hasPrefix("0x") || digits.hasPrefix("0X") { digits = digits.dropFirst(2) }
    while digits.count > 64, digits.first == "0" { digits = digits.dropFirst() }
    guard let v = UInt256(hex: String(digits)) else { throw ParseError("not a 256-bit hex integer: \(hex)") }
    return v
}

/// An Fp element from a hex integer that must be below p.
func fpValue(_ hex: String) throws -> Fp {
    let v = try bigInt(hex)
    guard v.lessThanMask(fieldPrime) != 0 else { throw ParseError("coordinate ≥ p: \(hex)") }
    return Fp(v)
}

/// `X:Y` as two Fp coordinates.
func parseG1Coordinates(_ s: String) throws -> (x: Fp, y: Fp) {
    let parts = s.split(separator: ":")
    guard parts.count == 2 else { throw ParseError("not X:Y: \(s)") }
    return (try fpValue(String(parts[0])), try fpValue(String(parts[1])))
}

/// `xa:xb&ya:yb` as two Fp2 coordinates (x = xa + xb·i).
func parseG2Coordinates(_ s: String) throws -> (x: Fp2, y: Fp2) {
    let halves = s.split(separator: "&")
    guard halves.count == 2 else { throw ParseError("not X&Y: \(s)") }
    func fp2(_ t: Substring) throws -> Fp2 {
        let parts = t.split(separator: ":")
        guard parts.count == 2 else { throw ParseError("not a:b: \(t)") }
        return Fp2(try fpValue(String(parts[0])), try fpValue(String(parts[1])))
    }
    return (try fp2(halves[0]), try fp2(halves[1]))
}

/// The comma-separated integers of a bracketed value, brackets ignored.
func bracketedIntegers(_ s: String) throws -> [Fp] {
    let cleaned = s.replacingOccurrences(of: "[", with: "").replacingOccurrences(of: "]", with: "")
    return try cleaned.split(separator: ",").map { try fpValue(String($0)) }
}

/// `[[[A,B],[C,D]],[[E,F],[G,H]],[[I,J],[K,L]]]` as an Fp12.
func parseFp12(_ s: String) throws -> Fp12 {
    let k = try bracketedIntegers(s)
    guard k.count == 12 else { throw ParseError("Fp12 needs 12 values, got \(k.count)") }
    return Fp12(coefficients: k)
}

/// `[[A,B],[C,D]]` as Fp4(Fp2(A,B), Fp2(C,D)).
func parseFp4(_ s: String) throws -> Fp4 {
    let k = try bracketedIntegers(s)
    guard k.count == 4 else { throw ParseError("Fp4 needs 4 values, got \(k.count)") }
    return Fp4(Fp2(k[0], k[1]), Fp2(k[2], k[3]))
}

// MARK: Encodings

/// 0x04 ‖ x ‖ y from raw 32-byte coordinates (no validation).
func rawG1Encoding(x: UInt256, y: UInt256) -> [UInt8] {
    [0x04] + x.bigEndianBytes + y.bigEndianBytes
}

/// X.a ‖ X.b ‖ Y.a ‖ Y.b from raw coordinates (no validation).
func rawG2Encoding(_ x: Fp2, _ y: Fp2) -> [UInt8] {
    x.a.bytes + x.b.bytes + y.a.bytes + y.b.bytes
}

// MARK: Descriptions for failure messages

func describe(_ p: G1Point) -> String {
    guard let (x, y) = p.affine else { return "infinity" }
    return hexString(x.bytes) + ":" + hexString(y.bytes)
}

func describe(_ p: G2Point) -> String {
    guard let (x, y) = p.affine else { return "infinity" }
    return [x.a, x.b, y.a, y.b].map { hexString($0.bytes) }.joined(separator: ":")
}

func describe(_ v: Fp12) -> String { hexString(v.bytes) }

func describe(_ v: Fp4) -> String {
    [v.a.a, v.a.b, v.b.a, v.b.b].map { hexString($0.bytes) }.joined(separator: ",")
}

/// Asserts two points are equal (projectively), printing both affine forms on failure.
func assertSamePoint<C>(_ got: ProjectivePoint<C>, _ expected: ProjectivePoint<C>, _ what: @autoclosure () -> String,
                        file: StaticString = #filePath, line: UInt = #line) {
    if !(got == expected) {
        XCTFail("\(what()): expected \(describePoint(expected)), got \(describePoint(got))", file: file, line: line)
    }
}

func describePoint<C>(_ p: ProjectivePoint<C>) -> String {
    if let g1 = p as? G1Point { return describe(g1) }
    if let g2 = p as? G2Point { return describe(g2) }
    return "?"
}

// MARK: Randomness

/// A uniform element of Fr from the system CSPRNG.
func randomFr() throws -> Fr {
    Fr(UInt256(bigEndian: try SystemRandom.scalar())!)
}

/// A uniform non-zero element of Fr.
func randomNonZeroFr() throws -> Fr {
    while true {
        let k = try randomFr()
        if !k.isZero { return k }
    }
}

/// Random bytes from the system CSPRNG.
func randomBytes(_ n: Int) throws -> [UInt8] { try SystemRandom.bytes(n) }

/// A random integer in 0..<bound from the system CSPRNG.
func randomInt(below bound: Int) throws -> Int {
    precondition(bound > 0)
    let raw = try SystemRandom.bytes(8)
    let v = raw.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    return Int(v % UInt64(bound))
}

/// The field prime p and group order r as UInt256, written out from docs/CRYPTO.md §1 (not taken
/// from the library, so that tests of the library's constants are meaningful).
let fieldPrime = UInt256(hex: "2400000008702a0db0bddf647a6366d3243fd6ee18093ee1be6623ef5c1b55b3")!
let groupOrder = UInt256(hex: "2400000008702a0db0bddf647a6366d2c43fd6ee0cc906cebe11c0a636eb1f6d")!

// MARK: Errors

/// Runs `body`, which must throw `expected` (or, when `expected` is nil, any MPinCryptoError).
func assertThrows<T>(_ expected: MPinCryptoError?, _ what: @autoclosure () -> String,
                     file: StaticString = #filePath, line: UInt = #line,
                     _ body: () throws(MPinCryptoError) -> T) {
    do throws(MPinCryptoError) {
        let value = try body()
        XCTFail("\(what()): expected \(expected.map { "\($0)" } ?? "an error"), got success \(value)",
                file: file, line: line)
    } catch {
        if let expected, error != expected {
            XCTFail("\(what()): expected \(expected), got \(error)", file: file, line: line)
        }
    }
}
