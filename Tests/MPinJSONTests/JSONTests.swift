import MPinJSON
import XCTest

final class JSONParserTests: XCTestCase {
    private let parser = JSONParser()

    func testParsesEveryKindOfValue() throws {
        let v = try parser.parse(#" { "a": [1, -2.5e3, 0], "b": {"c": null, "d": true, "e": false}, "s": "x\"\\\/\b\f\n\r\tÿ\u00e9\ud83d\ude00" } "#)
        XCTAssertEqual(v["a"], .array([.number("1"), .number("-2.5e3"), .number("0")]))
        XCTAssertEqual(v["b"]?["c"], .null)
        XCTAssertEqual(v["b"]?["d"]?.boolValue, true)
        XCTAssertEqual(v["b"]?["e"]?.boolValue, false)
        XCTAssertEqual(v["s"]?.stringValue, "x\"\\/\u{8}\u{c}\n\r\tÿé😀")
        XCTAssertNil(v["missing"])
    }

    func testRejectsMalformedDocuments() {
        let bad = ["", " ", "{", "}", "[1,]", "{\"a\":1,}", "{a:1}", "01", "-", "1.", ".5", "1e", "+1", "tru", "nul",
                   "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"\\ud800\\u0041\"", "[1 2]", "{\"a\" 1}",
                   "\"a\u{01}b\"", "{} {}", "[", "NaN", "Infinity", "'a'"]
        for text in bad {
            XCTAssertThrowsError(try parser.parse(text), "accepted \(text.debugDescription)")
        }
        XCTAssertThrowsError(try parser.parse([0x22, 0xFF, 0x22]), "invalid UTF-8")
    }

    /// docs/SECURITY.md §5: a reader of requests refuses a member named twice (nested too, and a name
    /// spelled with an escape is the same name); the default reading keeps both, the first wins.
    func testDuplicateMemberNamesAreRefusedWhenAsked() throws {
        var strict = JSONParser()
        strict.rejectsDuplicateKeys = true
        for text in [#"{"a":1,"a":2}"#, #"{"x":{"b":1,"c":2,"b":3}}"#, #"[{"u":"x","\u0075":"y"}]"#] {
            XCTAssertThrowsError(try strict.parse(text), text) { error in
                guard case .syntax(_, let reason) = error as? JSONError else { return XCTFail("\(error)") }
                XCTAssertEqual(reason, "duplicate member name")
            }
        }
        XCTAssertEqual(try strict.parse(#"{"a":{"a":1},"b":[{"a":2},{"a":3}]}"#)["a"]?["a"], .number("1"))
        XCTAssertEqual(try parser.parse(#"{"a":1,"a":2}"#)["a"], .number("1"))
    }

    func testLimits() {
        var deep = JSONParser()
        deep.maxDepth = 8
        XCTAssertNoThrow(try deep.parse(String(repeating: "[", count: 8) + String(repeating: "]", count: 8)))
        XCTAssertThrowsError(try deep.parse(String(repeating: "[", count: 10) + String(repeating: "]", count: 10))) {
            XCTAssertEqual($0 as? JSONError, .tooDeep(limit: 8))
        }
        var small = JSONParser()
        small.maxBytes = 16
        XCTAssertThrowsError(try small.parse("\"" + String(repeating: "a", count: 20) + "\"")) {
            XCTAssertEqual($0 as? JSONError, .tooLarge(limit: 16))
        }
        // The default depth limit holds for hostile (but well-formed) nesting without exhausting
        // the stack.
        XCTAssertThrowsError(try parser.parse(String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000))) {
            XCTAssertEqual($0 as? JSONError, .tooDeep(limit: 64))
        }
    }

    func testSerialisationRoundTrip() throws {
        let text = #"{"k":"v\n\u0001","n":[1,2.5,-3],"o":{"z":true,"a":null}}"#
        let v = try parser.parse(text)
        XCTAssertEqual(v.serializedString, text)
        XCTAssertEqual(try parser.parse(v.serialized), v)
    }

    func testControlCharactersUseTheShortEscapesWherePythonDoes() throws {
        let v = JSONValue.string("a\u{8}b\u{c}c\u{1}\t")
        XCTAssertEqual(v.serializedString, #""a\bb\fc\u0001\t""#)
        XCTAssertEqual(try parser.parse(v.serialized), v)
    }

    func testRandomBytesNeverCrash() {
        var rng = SystemRandomNumberGenerator()
        let alphabet = Array("{}[]\":,0123456789-+.eEtrufalsn \\u".utf8)
        for _ in 0..<3_000 {
            let n = Int.random(in: 0..<40, using: &rng)
            let bytes = (0..<n).map { _ in Bool.random(using: &rng) ? alphabet.randomElement(using: &rng)! : UInt8.random(in: 0...255, using: &rng) }
            _ = try? parser.parse(bytes)
        }
    }
}

final class JSONCodableTests: XCTestCase {
    struct Inner: Codable, Equatable { var x: Int32; var tags: [String] }
    struct Outer: Codable, Equatable {
        var name: String
        var flag: Bool
        var count: Int
        var ratio: Double
        var inner: Inner
        var optional: String?
        var big: UInt64
    }

    func testRoundTrip() throws {
        let value = Outer(name: "alice@example.org", flag: true, count: -7, ratio: 0.25,
                          inner: Inner(x: 42, tags: ["a", "b"]), optional: nil, big: .max)
        let bytes = try JSONEncoding.encode(value)
        let text = String(decoding: bytes, as: UTF8.self)
        XCTAssertFalse(text.contains("optional"), "nil optionals are omitted: \(text)")
        XCTAssertTrue(text.contains("\"big\":18446744073709551615"), text)
        XCTAssertEqual(try JSONDecoding.decode(Outer.self, from: bytes), value)
    }

    func testErrorsNameThePath() {
        let missing = #"{"name":"a","flag":true,"count":1,"ratio":1,"inner":{"x":1},"big":1}"#
        XCTAssertThrowsError(try JSONDecoding.decode(Outer.self, from: Array(missing.utf8))) {
            XCTAssertEqual($0 as? JSONError, .missingKey(path: "inner.tags"))
        }
        let wrongType = #"{"name":5,"flag":true,"count":1,"ratio":1,"inner":{"x":1,"tags":[]},"big":1}"#
        XCTAssertThrowsError(try JSONDecoding.decode(Outer.self, from: Array(wrongType.utf8))) {
            XCTAssertEqual($0 as? JSONError, .typeMismatch(path: "name", expected: "string", found: "number"))
        }
        let outOfRange = #"{"x":4294967296,"tags":[]}"#
        XCTAssertThrowsError(try JSONDecoding.decode(Inner.self, from: Array(outOfRange.utf8)))
        let fractional = #"{"x":1.5,"tags":[]}"#
        XCTAssertThrowsError(try JSONDecoding.decode(Inner.self, from: Array(fractional.utf8)))
        XCTAssertThrowsError(try JSONDecoding.decode(Inner.self, from: Array("[1]".utf8)))
    }

    func testErrorFieldIsTheInnermostKey() {
        XCTAssertEqual(JSONError.missingKey(path: "inner.tags").field, "tags")
        XCTAssertEqual(JSONError.typeMismatch(path: "name", expected: "string", found: "number").field, "name")
        XCTAssertNil(JSONError.typeMismatch(path: "", expected: "object", found: "array").field)
        XCTAssertNil(JSONError.syntax(offset: 3, reason: "x").field)
        XCTAssertNil(JSONError.tooLarge(limit: 1).field)
    }

    func testRawJSONValueField() throws {
        struct Holder: Codable { var any: JSONValue }
        let h = try JSONDecoding.decode(Holder.self, from: Array(#"{"any":{"deep":[1,"two"]}}"#.utf8))
        XCTAssertEqual(h.any["deep"], .array([.number("1"), .string("two")]))
        XCTAssertEqual(try JSONEncoding.value(h), .object([("any", h.any)]))
    }
}

final class JSONLenientDecodingTests: XCTestCase {
    typealias Inner = JSONCodableTests.Inner
    /// JSONCodableTests.Outer's kinds of member, with an optional nested object.
    struct Outer: Codable, Equatable {
        var name: String, flag: Bool, count: Int, ratio: Double, inner: Inner
        var optional: String?, optionalInner: Inner?
    }

    private func lenient(_ json: String) throws -> Outer {
        try JSONDecoding.decodeLeniently(Outer.self, from: try JSONParser().parse(Array(json.utf8)))
    }

    func testMissingAndMistypedMembersTakeZeroValues() throws {
        XCTAssertEqual(try lenient("{}"), Outer(name: "", flag: false, count: 0, ratio: 0, inner: Inner(x: 0, tags: []),
                                                optional: nil, optionalInner: nil))
        let mistyped = try lenient(#"{"name":1,"flag":"true","count":"3","ratio":null,"inner":[1],"optional":2,"optionalInner":"x"}"#)
        XCTAssertEqual(mistyped, Outer(name: "", flag: false, count: 0, ratio: 0, inner: Inner(x: 0, tags: []),
                                       optional: nil, optionalInner: nil))
        // Out-of-range and fractional integers are zero too, as an absent one would be.
        XCTAssertEqual(try lenient(#"{"inner":{"x":4294967296,"tags":["a",2]}}"#).inner, Inner(x: 0, tags: ["a", ""]))
        XCTAssertEqual(try lenient(#"{"count":1.5}"#).count, 0)
    }

    func testWellTypedMembersReadAsStrictly() throws {
        let json = #"{"name":"n","flag":true,"count":-2,"ratio":0.5,"inner":{"x":3,"tags":["t"]},"optional":"o","optionalInner":{"x":1}}"#
        XCTAssertEqual(try lenient(json), Outer(name: "n", flag: true, count: -2, ratio: 0.5, inner: Inner(x: 3, tags: ["t"]),
                                                optional: "o", optionalInner: Inner(x: 1, tags: [])))
        // The strict decoder refuses what the lenient one accepted.
        XCTAssertThrowsError(try JSONDecoding.decode(Outer.self, from: Array(json.utf8))) {
            XCTAssertEqual($0 as? JSONError, .missingKey(path: "optionalInner.tags"))
        }
    }

    func testANonObjectTopLevelIsAnEmptyObject() throws {
        XCTAssertEqual(try JSONDecoding.decodeLeniently(Inner.self, from: .string("x")), Inner(x: 0, tags: []))
    }
}
