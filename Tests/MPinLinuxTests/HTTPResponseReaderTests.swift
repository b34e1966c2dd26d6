import Foundation
import MPinClient
import MPinLinux
import XCTest

/// How replies are read: framing (RFC 9112 section 6.3), interim responses, and when a
/// connection may carry the next request. HTTPResponseReader is internal, so it is exercised
/// through PlainHTTPTransport against scripted replies, and each reply goes through curl too:
/// both must read it alike. Where they deliberately differ the test says so and checks the
/// socket transport alone.
final class HTTPResponseReaderTests: XCTestCase {
    private let servers = TestServers()

    override func tearDown() {
        servers.stopAll()
        super.tearDown()
    }

    private var plain: TransportUnderTest { transportsUnderTest.first { $0.name == "plain" }! }

    /// A server that answers one request with `reply` and closes.
    private func replying(_ reply: String) throws -> TestHTTPServer {
        try servers.start(.raw(Array(reply.utf8)))
    }

    private func get(_ server: TestHTTPServer, with make: TransportUnderTest, path: String = "/") throws -> HTTPResponse {
        try make(.init(timeout: .seconds(3))).send(HTTPRequest(method: .get, url: server.baseURL + path))
    }

    /// The reply must fail as a broken connection (never as a response, never as a timeout).
    private func assertConnectionFailure(_ reply: String, with make: TransportUnderTest, _ message: String,
                                         file: StaticString = #filePath, line: UInt = #line) throws {
        let server = try replying(reply)
        let error = transportError({ try get(server, with: make) }, file: file, line: line)
        guard case .connectionFailed(let host, _) = error else {
            return XCTFail("\(make.name): \(message): got \(String(describing: error))", file: file, line: line)
        }
        XCTAssertEqual(host, server.baseURL, "\(make.name): \(message)", file: file, line: line)
    }

    /// Several chunks, extensions (one with a quoted value and spaces) and trailers.
    static let chunkedReply = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
        + "5;name=value\r\nhello\r\n" + "2 ; ext=\"q;x\"\r\n, \r\n" + "A\r\nchunked bo\r\n" + "c\r\ndy, decoded!\r\n"
        + "0;last\r\nX-Trailer: t\r\nX-Other: u\r\n\r\n"
    static let chunkedBody = "hello, chunked body, decoded!"

    func testChunkedBodyIsDecoded() throws {
        for make in transportsUnderTest {
            let response = try get(try replying(Self.chunkedReply), with: make)
            XCTAssertEqual(response.status, 200, make.name)
            XCTAssertEqual(response.text, Self.chunkedBody, make.name)
            XCTAssertEqual(response.header("Content-Type"), "text/plain", make.name)
            // Trailers are not headers of the response (both transports drop them).
            XCTAssertNil(response.header("X-Trailer"), make.name)
            XCTAssertNil(response.header("X-Other"), make.name)
        }
    }

    /// A head over 64 KiB is refused by both transports, even well inside the response limit:
    /// a server repeating one header must not make the client join an ever-growing value.
    func testOversizedHeadIsRefused() throws {
        let line = "X-Repeated: " + String(repeating: "v", count: 40) + "\r\n"
        let reply = "HTTP/1.1 200 OK\r\n" + String(repeating: line, count: 2000) + "Content-Length: 0\r\n\r\n"
        for make in transportsUnderTest {
            let error = transportError { try self.get(try self.replying(reply), with: make) }
            XCTAssertEqual(error, .responseTooLarge(limit: 1 << 20), make.name)
        }
        // Just under the cap it is a response, with the repeats joined.
        let small = "HTTP/1.1 200 OK\r\n" + String(repeating: line, count: 1000) + "Content-Length: 0\r\n\r\n"
        for make in transportsUnderTest {
            let response = try get(try replying(small), with: make)
            XCTAssertEqual(response.header("x-repeated")?.utf8.count, 1000 * 40 + 999 * 2, make.name)
        }
    }

    /// A NUL in a header value is refused (RFC 9110 section 5.5), as libcurl does.
    func testNULInAHeaderValueIsAConnectionFailure() throws {
        for make in transportsUnderTest {
            try assertConnectionFailure("HTTP/1.1 200 OK\r\nX-A: a\u{0}b\r\nContent-Length: 0\r\n\r\n", with: make, "NUL")
        }
    }

    /// The reader stops exactly after the trailers' blank line: nothing is left over, so the
    /// connection carries the next request.
    func testChunkedReplyLeavesTheConnectionReusable() throws {
        for make in transportsUnderTest {
            let server = try servers.start(.persistentRaw(Array(Self.chunkedReply.utf8)))
            let transport = make(.init(timeout: .seconds(3)))
            for index in 0..<3 {
                let response = try transport.send(HTTPRequest(method: .get, url: server.baseURL + "/c\(index)"))
                XCTAssertEqual(response.text, Self.chunkedBody, make.name)
            }
            XCTAssertEqual(server.acceptedConnections, 1, make.name)
        }
    }

    /// Every boundary a reply can be cut at (inside the status line, between CR and LF, in a
    /// chunk size, in the final blank line) arrives as its own segment.
    func testReplyArrivingByteByByteIsReassembled() throws {
        let reply = "HTTP/1.1 100 Continue\r\n\r\n" + Self.chunkedReply
        for make in transportsUnderTest {
            let server = try servers.start(.rawInPieces(reply.utf8.map { [$0] }, pauseMicroseconds: 1000))
            let response = try get(server, with: make)
            XCTAssertEqual(response.status, 200, make.name)
            XCTAssertEqual(response.text, Self.chunkedBody, make.name)
        }
    }

    func testMalformedChunkIsAConnectionFailure() throws {
        let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        for make in transportsUnderTest {
            try assertConnectionFailure(head + "zz\r\nhello\r\n0\r\n\r\n", with: make, "size not hex")
            try assertConnectionFailure(head + "\r\nhello\r\n0\r\n\r\n", with: make, "size missing")
            try assertConnectionFailure(head + "-5\r\nhello\r\n0\r\n\r\n", with: make, "negative size")
            try assertConnectionFailure(head + "3\r\nhello\r\n0\r\n\r\n", with: make, "chunk longer than its size")
        }
        // The socket transport also refuses a size with a hex prefix (curl reads `0x5` as the
        // last chunk, `0`, and the rest as trailers).
        try assertConnectionFailure(head + "0x5\r\nhello\r\n0\r\n\r\n", with: plain, "0x prefix")
    }

    /// `100 Continue` and `103 Early Hints` come before the real response and leave nothing
    /// of theirs in it.
    func testInterimResponsesAreSkipped() throws {
        let reply = "HTTP/1.1 100 Continue\r\nX-Interim: 1\r\n\r\n" + "HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n"
            + "HTTP/1.1 201 Created\r\nContent-Length: 5\r\nX-Final: 1\r\n\r\nhello"
        for make in transportsUnderTest {
            let response = try get(try replying(reply), with: make)
            XCTAssertEqual(response.status, 201, make.name)
            XCTAssertEqual(response.text, "hello", make.name)
            XCTAssertEqual(response.header("X-Final"), "1", make.name)
            XCTAssertNil(response.header("X-Interim"), make.name)
            XCTAssertNil(response.header("Link"), make.name)
        }
    }

    /// Without Content-Length or chunked framing the body is everything up to the close
    /// (several reads' worth here).
    func testBodyUntilCloseIsReturned() throws {
        let body = String((0..<100_000).map { Character(UnicodeScalar(UInt8(ascii: "a") + UInt8($0 % 26))) })
        for make in transportsUnderTest {
            let response = try get(try replying("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + body), with: make)
            XCTAssertEqual(response.status, 200, make.name)
            XCTAssertEqual(response.text, body, make.name)
            let old = try get(try replying("HTTP/1.0 200 OK\r\n\r\nhello"), with: make)
            XCTAssertEqual(old.text, "hello", make.name)
        }
    }

    /// A close before the framing says the reply is complete is a broken connection, not a
    /// short body.
    func testReplyCutShortIsAConnectionFailure() throws {
        for make in transportsUnderTest {
            try assertConnectionFailure("HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nhello", with: make, "short of Content-Length")
            try assertConnectionFailure("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", with: make,
                                        "inside a chunk")
            try assertConnectionFailure("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n", with: make,
                                        "before the last chunk")
        }
        // Cut inside the head (libcurl itself reports success; CurlHTTPTransport checks that
        // the head's blank line arrived).
        for make in transportsUnderTest {
            try assertConnectionFailure("HTTP/1.1 200 OK\r\nContent-Le", with: make, "inside the head")
            try assertConnectionFailure("HTTP/1.1 200 OK\r\nX-A: 1\r\n", with: make, "before the blank line")
        }
    }

    /// Repeated equal lengths (a proxy merged duplicates) are one length; different ones leave
    /// the body's end unknown. curl takes the last of them; the socket transport refuses.
    func testConflictingContentLengthsAreAConnectionFailure() throws {
        for make in transportsUnderTest {
            let same = try get(try replying("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello"), with: make)
            XCTAssertEqual(same.text, "hello", make.name)
        }
        try assertConnectionFailure("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!", with: plain,
                                    "two lengths")
        try assertConnectionFailure("HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\nhello!", with: plain, "a list of two")
    }

    /// 204 and 304 have no body whatever their headers say: the reply ends with the head and the
    /// connection stays usable (waiting for a body would hang until the timeout).
    func testRepliesWithoutBodyEndAtTheHead() throws {
        for reply in ["HTTP/1.1 204 No Content\r\n\r\n", "HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n"] {
            for make in transportsUnderTest {
                let server = try servers.start(.persistentRaw(Array(reply.utf8)))
                let transport = make(.init(timeout: .seconds(3)))
                for index in 0..<2 {
                    let response = try transport.send(HTTPRequest(method: .get, url: server.baseURL + "/n\(index)"))
                    XCTAssertEqual(response.body, [], make.name)
                }
                XCTAssertEqual(server.acceptedConnections, 1, "\(make.name): \(reply)")
            }
        }
    }

    /// HTTP/1.1 keeps the connection unless the reply says close; HTTP/1.0 closes it unless the
    /// reply says keep-alive. The server here keeps every connection open, so only the client's
    /// decision counts.
    func testConnectionReuseFollowsTheReply() throws {
        let cases: [(head: String, reused: Bool)] = [
            ("HTTP/1.1 200 OK\r\n", true),
            ("HTTP/1.1 200 OK\r\nConnection: close\r\n", false),
            ("HTTP/1.1 200 OK\r\nConnection: Keep-Alive, Close\r\n", false),
            ("HTTP/1.0 200 OK\r\n", false),
            ("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n", true),
        ]
        for (head, reused) in cases {
            for make in transportsUnderTest {
                let server = try servers.start(.persistent(head: head))
                let transport = make(.init(timeout: .seconds(3)))
                for index in 0..<3 {
                    let response = try transport.send(HTTPRequest(method: .get, url: server.baseURL + "/r\(index)"))
                    // curl asks in HTTP/1.0 once a server has answered in it; the socket transport stays at 1.1.
                    XCTAssertTrue(response.text.hasPrefix("GET /r\(index) HTTP/1."), "\(make.name): \(response.text)")
                }
                XCTAssertEqual(server.acceptedConnections, reused ? 1 : 3, "\(make.name): \(head.debugDescription)")
            }
        }
    }

    /// Transfer-Encoding with Content-Length: chunked wins, and the connection is not trusted
    /// with another request (the pair is how requests get smuggled).
    func testChunkedWithContentLengthIsReadButNotReused() throws {
        let reply = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
        let server = try servers.start(.persistentRaw(Array(reply.utf8)))
        let transport = plain(.init(timeout: .seconds(3)))
        for index in 0..<2 {
            XCTAssertEqual(try transport.send(HTTPRequest(method: .get, url: server.baseURL + "/x\(index)")).text, "hello")
        }
        XCTAssertEqual(server.acceptedConnections, 2)
    }

    func testMalformedHeadIsAConnectionFailure() throws {
        for make in transportsUnderTest {
            try assertConnectionFailure("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nno colon here\r\n\r\nhello", with: make,
                                        "header without a colon")
            try assertConnectionFailure("HTTP/1.1 099 Odd\r\nContent-Length: 5\r\n\r\nhello", with: make, "status below 100")
            try assertConnectionFailure("HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n", with: make,
                                        "protocol switch")
            try assertConnectionFailure("HTTP/1.1 200 OK\r\nContent-Length: x5\r\n\r\nhello", with: make,
                                        "length not a number")
        }
    }

    /// Header names come back lower-cased, values without surrounding blanks, repeated fields
    /// joined; bare LF line ends are read like CRLF.
    func testHeaderFieldsAreNormalised() throws {
        for make in transportsUnderTest {
            let response = try get(try replying("HTTP/1.1 200 OK\r\nX-MiXeD: v\r\nX-Spaced: \t a b \t\r\n"
                                                + "X-Twice: 1\r\nx-twice: 2\r\nContent-Length: 2\r\n\r\nok"), with: make)
            XCTAssertEqual(response.headers["x-mixed"], "v", make.name)
            XCTAssertEqual(response.header("X-Spaced"), "a b", make.name)
            XCTAssertEqual(response.header("X-Twice"), "1, 2", make.name)
            XCTAssertEqual(response.text, "ok", make.name)

            let bare = try get(try replying("HTTP/1.1 202 Accepted\nContent-Length: 5\nX-A: b\n\nhello"), with: make)
            XCTAssertEqual(bare.status, 202, make.name)
            XCTAssertEqual(bare.header("X-A"), "b", make.name)
            XCTAssertEqual(bare.text, "hello", make.name)
        }
    }
}
