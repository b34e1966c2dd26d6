import MPinClient
import MPinJSON
import MPinTestSupport
import XCTest

/// Client-settings URL resolution (docs/PROTOCOL.md §3.1) and the small helpers the client
/// modules use instead of `_StringProcessing` and `_Concurrency`.
final class SettingsResolutionTests: XCTestCase {
    private func resolvedSettings(_ json: String) -> [String: JSONValue] {
        let t = ScriptedTransport { (r) throws(HTTPTransportError) -> HTTPResponse in
            HTTPResponse(status: 200, body: Array(json.utf8))
        }
        let s = MPinSDK(context: TestContext(transport: t, secureStorage: MemoryStorage(), nonSecureStorage: MemoryStorage()))
        XCTAssertEqual(s.initialize(config: ["backend": "http://rps.test/"]).code, .ok)
        guard case .object(let members)? = s.clientSettingsDocument else {
            XCTFail("no settings kept")
            return [:]
        }
        return Dictionary(members, uniquingKeysWith: { a, _ in a })
    }

    func testRelativeURLsAreJoinedAndEveryWebSocketSchemeIsReplaced() {
        let r = resolvedSettings(#"""
            {"registerURL": "/rps/user", "mpinAuthServerURL": "wss://a.test/ws", "other": "ws://b.test and wss://c.test",
             "same": "https://d.test/wss:/", "n": 7, "certivoxURL": "http://dta.test/"}
            """#)
        XCTAssertEqual(r["registerURL"]?.stringValue, "http://rps.test/rps/user")
        XCTAssertEqual(r["mpinAuthServerURL"]?.stringValue, "https://a.test/ws")
        XCTAssertEqual(r["other"]?.stringValue, "http://b.test and https://c.test", "every occurrence, as the SDK core does")
        XCTAssertEqual(r["same"]?.stringValue, "https://d.test/wss:/", "no full scheme, nothing replaced")
        XCTAssertEqual(r["certivoxURL"]?.stringValue, "http://dta.test/")
        XCTAssertEqual(r["n"], .number("7"))
    }

    func testReplacingEveryHandlesMultiByteTextAndOverlaps() {
        let r = resolvedSettings(#"{"a": "é wss://x ü wss://wss://y", "b": "wsswss://z"}"#)
        XCTAssertEqual(r["a"]?.stringValue, "é https://x ü https://https://y")
        XCTAssertEqual(r["b"]?.stringValue, "wsshttps://z")
    }

    func testMonotonicInstantArithmetic() {
        let a = MonotonicInstant.now
        let b = a + .milliseconds(1500)
        XCTAssertTrue(a < b)
        XCTAssertEqual(b - a, .milliseconds(1500))
        XCTAssertEqual(a - b, .milliseconds(-1500))
        XCTAssertTrue(a + .seconds(-1) < a)
        // A huge budget saturates instead of wrapping into the past.
        XCTAssertTrue(a < a + .seconds(Int64.max))
        XCTAssertTrue(a + .seconds(Int64.min) < a)
        XCTAssertFalse(MonotonicInstant.now < a, "the clock does not go back")
    }
}
