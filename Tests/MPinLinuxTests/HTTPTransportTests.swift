import Foundation
import MPinClient
import MPinLinux
import XCTest

/// Runs `body` and returns the transport error it throws, failing the test if it returns.
func transportError(_ body: () throws -> HTTPResponse,
                    file: StaticString = #filePath, line: UInt = #line) -> HTTPTransportError? {
    do {
        let response = try body()
        XCTFail("expected an error, got status \(response.status)", file: file, line: line)
        return nil
    } catch let error as HTTPTransportError {
        return error
    } catch {
        XCTFail("expected an HTTPTransportError, got \(error)", file: file, line: line)
        return nil
    }
}

/// A transport the contract tests run against: a name for messages, a factory, and the option
/// that makes mpin-fork-check use it.
struct TransportUnderTest: Sendable {
    let name: String
    let factory: @Sendable (LinuxHTTPConfiguration) -> any HTTPTransport
    let forkCheckOptions: [String]

    func callAsFunction(_ configuration: LinuxHTTPConfiguration = LinuxHTTPConfiguration()) -> any HTTPTransport {
        factory(configuration)
    }
}

/// Both Linux transports: `LinuxHTTPTransport` picks one per URL, so they must be interchangeable.
let transportsUnderTest = [
    TransportUnderTest(name: "curl", factory: { CurlHTTPTransport(configuration: $0) }, forkCheckOptions: []),
    TransportUnderTest(name: "plain", factory: { PlainHTTPTransport(configuration: $0) }, forkCheckOptions: ["--plain"]),
]

/// Runs `body` with exactly these proxy variables set (every other one unset), restoring the
/// environment afterwards.
func withProxyVariables(_ values: [String: String], _ body: () throws -> Void) rethrows {
    let names = ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
                 "no_proxy", "NO_PROXY"]
    let saved: [(String, String?)] = names.map { name in (name, getenv(name).map { String(cString: $0) }) }
    defer {
        for (name, value) in saved {
            if let value { setenv(name, value, 1) } else { unsetenv(name) }
        }
    }
    for name in names { unsetenv(name) }
    for (name, value) in values { setenv(name, value, 1) }
    try body()
}

/// A request as an echo server received it, split into request line, header fields and body.
struct EchoedRequest {
    let text: String
    let line: String
    let fields: [(name: String, value: String)]
    let body: String

    init(_ response: HTTPResponse) {
        text = response.text
        let parts = text.components(separatedBy: "\r\n\r\n")
        var lines = parts[0].components(separatedBy: "\r\n")
        line = lines.removeFirst()
        fields = lines.map { line in
            let colon = line.firstIndex(of: ":") ?? line.endIndex
            let value = line[colon...].dropFirst().trimmingCharacters(in: .whitespaces)
            return (String(line[..<colon]), value)
        }
        body = parts.dropFirst().joined(separator: "\r\n\r\n")
    }

    /// Every value of the header `name`, compared case-insensitively, in the order sent.
    func values(_ name: String) -> [String] {
        fields.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }
}

/// What both transports must do alike: every test runs against each, with servers of its own
/// where connections are counted.
final class HTTPTransportContractTests: XCTestCase {
    private let servers = TestServers()

    override func tearDown() {
        servers.stopAll()
        super.tearDown()
    }

    private func start(_ behaviour: TestHTTPServer.Behaviour) throws -> TestHTTPServer {
        try servers.start(behaviour)
    }

    func testGetSendsHeadersAndUserAgentAndReturnsResponse() throws {
        let server = try start(.echo)
        for make in transportsUnderTest {
            let transport = make()
            let response = try transport.send(HTTPRequest(method: .get, url: server.baseURL + "/rps/clientSettings?a=1",
                                                          headers: ["X-MIRACL-OS-Class": "linux", "X-Empty": ""]))
            XCTAssertEqual(response.status, 200, make.name)
            let request = response.text
            XCTAssertTrue(request.hasPrefix("GET /rps/clientSettings?a=1 HTTP/1.1\r\n"), "\(make.name): \(request)")
            XCTAssertTrue(request.contains("\r\nUser-Agent: mpin-pam/0.1\r\n"), "\(make.name): \(request)")
            XCTAssertTrue(request.contains("\r\nX-MIRACL-OS-Class: linux\r\n"), "\(make.name): \(request)")
            XCTAssertTrue(request.contains("\r\nX-Empty:"), "\(make.name): \(request)")
            XCTAssertFalse(request.lowercased().contains("content-length"), "\(make.name): \(request)")
            XCTAssertEqual(response.header("Content-Type"), "text/plain", make.name)
            XCTAssertEqual(response.headers["content-type"], "text/plain", make.name)
            XCTAssertEqual(response.header("x-repeated"), "one, two", make.name)
        }
    }

    /// The request line and the headers the transport adds are the same whichever transport
    /// sends it: the server (and any signature over the request) sees one format.
    func testRequestIsSentAsHTTP11WithTheTransportsHeaders() throws {
        for make in transportsUnderTest {
            let server = try start(.keepAliveEcho)
            let transport = make()
            func sent(_ request: HTTPRequest) throws -> EchoedRequest {
                let response = try transport.send(request)
                XCTAssertEqual(response.status, 200, make.name)
                return EchoedRequest(response)
            }

            // The fragment stays with the client; the query goes as given.
            let get = try sent(HTTPRequest(method: .get, url: server.baseURL + "/rps/x?a=1&b=%20c#frag-SECRET"))
            XCTAssertEqual(get.line, "GET /rps/x?a=1&b=%20c HTTP/1.1", make.name)
            XCTAssertFalse(get.text.contains("frag-SECRET"), "\(make.name): \(get.text)")
            XCTAssertEqual(get.values("Host"), ["127.0.0.1:\(server.port)"], make.name)
            XCTAssertEqual(get.values("User-Agent"), ["mpin-pam/0.1"], make.name)
            XCTAssertEqual(get.values("Accept"), ["*/*"], make.name)
            XCTAssertEqual(get.values("Content-Length"), [], "\(make.name): no body, no length on GET")
            XCTAssertEqual(get.values("Transfer-Encoding"), [], make.name)
            XCTAssertEqual(get.body, "", make.name)

            XCTAssertEqual(try sent(HTTPRequest(method: .get, url: server.baseURL + "?a=b")).line, "GET /?a=b HTTP/1.1",
                           make.name)
            XCTAssertEqual(try sent(HTTPRequest(method: .get, url: server.baseURL)).line, "GET / HTTP/1.1", make.name)

            let post = try sent(HTTPRequest(method: .post, url: server.baseURL + "/rps/pass1", text: "{\"a\":1}"))
            XCTAssertEqual(post.values("Content-Length"), ["7"], make.name)
            XCTAssertEqual(post.body, "{\"a\":1}", make.name)
            for method in [HTTPMethod.post, .put, .patch] {
                let empty = try sent(HTTPRequest(method: method, url: server.baseURL + "/e"))
                XCTAssertEqual(empty.line, "\(method.rawValue) /e HTTP/1.1", make.name)
                XCTAssertEqual(empty.values("Content-Length"), ["0"], "\(make.name): empty \(method.rawValue)")
                XCTAssertEqual(empty.body, "", make.name)
            }

            // The caller's User-Agent and Accept replace the defaults instead of doubling them.
            let replaced = try sent(HTTPRequest(method: .get, url: server.baseURL + "/r",
                                                headers: ["User-Agent": "caller/2", "Accept": "application/json"]))
            XCTAssertEqual(replaced.values("User-Agent"), ["caller/2"], make.name)
            XCTAssertEqual(replaced.values("Accept"), ["application/json"], make.name)
            let configured = try make(.init(userAgent: "configured/3")).send(HTTPRequest(method: .get, url: server.baseURL + "/c"))
            XCTAssertEqual(EchoedRequest(configured).values("User-Agent"), ["configured/3"], make.name)
        }
    }

    func testPostSendsBodyWithoutCurlDefaults() throws {
        let server = try start(.echo)
        for make in transportsUnderTest {
            let body = String(repeating: "{\"pass\": 1}", count: 300)  // over 1 KiB: curl would add Expect
            let response = try make().send(HTTPRequest(
                method: .post, url: server.baseURL + "/rps/pass1",
                headers: ["Content-Type": "application/json; charset=UTF-8", "Accept": "text/plain"], text: body))
            XCTAssertEqual(response.status, 200, make.name)
            let request = response.text
            XCTAssertTrue(request.hasPrefix("POST /rps/pass1 HTTP/1.1\r\n"), "\(make.name): \(request)")
            XCTAssertTrue(request.contains("\r\nContent-Type: application/json; charset=UTF-8\r\n"), make.name)
            XCTAssertTrue(request.contains("\r\nAccept: text/plain\r\n"), make.name)
            XCTAssertTrue(request.contains("\r\nContent-Length: \(body.utf8.count)\r\n"), make.name)
            XCTAssertFalse(request.contains("Expect:"), "\(make.name): no 100-continue round trip")
            XCTAssertTrue(request.hasSuffix("\r\n\r\n" + body), make.name)

            // Without a Content-Type the body must not be labelled a form.
            let bare = try make().send(HTTPRequest(method: .post, url: server.baseURL + "/x", text: "{}"))
            XCTAssertFalse(bare.text.contains("x-www-form-urlencoded"), "\(make.name): \(bare.text)")
            XCTAssertTrue(bare.text.hasSuffix("\r\n\r\n{}"), make.name)
        }
    }

    func testOtherMethods() throws {
        let server = try start(.echo)
        for make in transportsUnderTest {
            let transport = make()
            let put = try transport.send(HTTPRequest(method: .put, url: server.baseURL + "/rps/user", text: "{\"userId\":\"a\"}"))
            XCTAssertTrue(put.text.hasPrefix("PUT /rps/user HTTP/1.1\r\n"), "\(make.name): \(put.text)")
            XCTAssertTrue(put.text.hasSuffix("{\"userId\":\"a\"}"), make.name)
            let emptyPost = try transport.send(HTTPRequest(method: .post, url: server.baseURL + "/rps/getAccessNumber"))
            XCTAssertTrue(emptyPost.text.hasPrefix("POST /rps/getAccessNumber HTTP/1.1\r\n"), make.name)
            XCTAssertTrue(emptyPost.text.contains("\r\nContent-Length: 0\r\n"), make.name)
            for method in [HTTPMethod.delete, .options, .patch] {
                let response = try transport.send(HTTPRequest(method: method, url: server.baseURL + "/m"))
                XCTAssertTrue(response.text.hasPrefix("\(method.rawValue) /m HTTP/1.1\r\n"), "\(make.name): \(response.text)")
            }
        }
    }

    func testStatusCodesArePassedThrough() throws {
        let server = try start(.echo)
        for make in transportsUnderTest {
            let transport = make()
            for status in [201, 400, 401, 403, 404, 406, 408, 410, 412, 500, 503] {
                let response = try transport.send(HTTPRequest(method: .get, url: server.baseURL + "/status/\(status)"))
                XCTAssertEqual(response.status, status, make.name)
            }
        }
    }

    func testConnectionRefusedIsQuickAndKeepsSecretsOut() {
        for make in transportsUnderTest {
            let port = unusedLocalPort()
            let started = Date()
            let error = transportError {
                try make().send(HTTPRequest(method: .get, url: "http://127.0.0.1:\(port)/rps/signature/abcd?regOTT=SECRET0TT"))
            }
            XCTAssertLessThan(Date().timeIntervalSince(started), 2, make.name)
            XCTAssertEqual(error, .connectionRefused(host: "http://127.0.0.1:\(port)"), make.name)
            XCTAssertFalse(String(describing: error).contains("SECRET0TT"), make.name)
            XCTAssertFalse(String(describing: error).contains("signature"), make.name)
        }
    }

    /// A server that never answers the handshake: the connect timeout, not the total one,
    /// bounds the wait, and the error names it.
    func testUnansweredConnectTimesOutAfterTheConnectTimeout() throws {
        for make in transportsUnderTest {
            let listener = try FullBacklogListener()
            defer { listener.stop() }
            let transport = make(.init(connectTimeout: .milliseconds(400), timeout: .seconds(5)))
            let started = Date()
            let error = transportError { try transport.send(HTTPRequest(method: .get, url: listener.baseURL + "/")) }
            let elapsed = Date().timeIntervalSince(started)
            XCTAssertEqual(error, .timedOut(host: listener.baseURL, seconds: 0.4), make.name)
            XCTAssertGreaterThanOrEqual(elapsed, 0.35, make.name)
            XCTAssertLessThan(elapsed, 2.0, make.name)
        }
    }

    func testSilentServerTimesOutWithinTheConfiguredTime() throws {
        let server = try start(.silent)
        for make in transportsUnderTest {
            let transport = make(.init(timeout: .milliseconds(800)))
            let started = Date()
            let error = transportError { try transport.send(HTTPRequest(method: .get, url: server.baseURL + "/pass1")) }
            let elapsed = Date().timeIntervalSince(started)
            XCTAssertEqual(error, .timedOut(host: server.baseURL, seconds: 0.8), make.name)
            XCTAssertGreaterThanOrEqual(elapsed, 0.75, make.name)
            XCTAssertLessThan(elapsed, 2.0, make.name)
        }
    }

    func testRequestTimeoutOverridesTheDefault() throws {
        let server = try start(.silent)
        for make in transportsUnderTest {
            let started = Date()
            let error = transportError {
                try make().send(HTTPRequest(method: .post, url: server.baseURL + "/pass2", text: "{}",
                                            timeout: .milliseconds(500)))
            }
            XCTAssertEqual(error, .timedOut(host: server.baseURL, seconds: 0.5), make.name)
            let elapsed = Date().timeIntervalSince(started)
            XCTAssertGreaterThanOrEqual(elapsed, 0.45, "\(make.name): the request's own timeout, not an earlier failure")
            XCTAssertLessThan(elapsed, 1.5, make.name)
        }
    }

    /// A reply that stops half-way is a timeout too: receiving some bytes does not extend the limit.
    func testReplyStallingMidBodyTimesOut() throws {
        let server = try start(.rawThenStall(Array("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc".utf8)))
        for make in transportsUnderTest {
            let started = Date()
            let error = transportError {
                try make(.init(timeout: .milliseconds(600))).send(HTTPRequest(method: .get, url: server.baseURL + "/"))
            }
            let elapsed = Date().timeIntervalSince(started)
            XCTAssertEqual(error, .timedOut(host: server.baseURL, seconds: 0.6), make.name)
            XCTAssertGreaterThanOrEqual(elapsed, 0.55, make.name)
            XCTAssertLessThan(elapsed, 2.0, make.name)
        }
    }

    /// A declared length over the limit is refused before the body is read: the server cannot
    /// send it all (64 MiB is more than the socket buffers hold).
    func testHugeBodyWithLengthIsRefused() throws {
        let total = 64 << 20
        for make in transportsUnderTest {
            let server = try start(.huge(bytes: total, framing: .length))
            let error = transportError {
                try make(.init(maxResponseBytes: 64 * 1024)).send(HTTPRequest(method: .get, url: server.baseURL + "/"))
            }
            XCTAssertEqual(error, .responseTooLarge(limit: 64 * 1024), make.name)
            server.stop()
            XCTAssertLessThan(server.bodyBytesSent, total, make.name)
        }
    }

    func testHugeBodyWithoutLengthIsAbortedMidTransfer() throws {
        let total = 64 << 20
        for make in transportsUnderTest {
            let server = try start(.huge(bytes: total, framing: .untilClose))
            let error = transportError {
                try make(.init(maxResponseBytes: 64 * 1024)).send(HTTPRequest(method: .get, url: server.baseURL + "/"))
            }
            XCTAssertEqual(error, .responseTooLarge(limit: 64 * 1024), make.name)
            // The client hung up long before the end: the server could not send the whole body
            // (socket buffers hold a few MiB at most).
            server.stop()
            XCTAssertLessThan(server.bodyBytesSent, total, make.name)
        }
    }

    func testHugeChunkedBodyIsAbortedMidTransfer() throws {
        let total = 64 << 20
        for make in transportsUnderTest {
            let server = try start(.huge(bytes: total, framing: .chunked))
            let error = transportError {
                try make(.init(maxResponseBytes: 64 * 1024)).send(HTTPRequest(method: .get, url: server.baseURL + "/"))
            }
            XCTAssertEqual(error, .responseTooLarge(limit: 64 * 1024), make.name)
            server.stop()
            XCTAssertLessThan(server.bodyBytesSent, total, make.name)
        }
    }

    /// The limit counts head and body together, and a response of exactly the limit fits.
    func testResponseOfExactlyTheLimitIsAccepted() throws {
        let bodySize = 10_000
        let limit = TestHTTPServer.hugeHead(bytes: bodySize, framing: .length).utf8.count + bodySize
        for make in transportsUnderTest {
            let server = try start(.huge(bytes: bodySize, framing: .length))
            let response = try make(.init(maxResponseBytes: limit)).send(HTTPRequest(method: .get, url: server.baseURL + "/"))
            XCTAssertEqual(response.body.count, bodySize, make.name)

            let over = try start(.huge(bytes: bodySize, framing: .length))
            let error = transportError {
                try make(.init(maxResponseBytes: limit - 1)).send(HTTPRequest(method: .get, url: over.baseURL + "/"))
            }
            XCTAssertEqual(error, .responseTooLarge(limit: limit - 1), make.name)
        }
    }

    func testGarbageReplyIsAConnectionFailure() throws {
        let server = try start(.raw(Array("this is not http\r\n\r\n".utf8)))
        for make in transportsUnderTest {
            let error = transportError { try make().send(HTTPRequest(method: .get, url: server.baseURL + "/")) }
            guard case .connectionFailed(let host, _) = error else {
                XCTFail("\(make.name): got \(String(describing: error))")
                continue
            }
            XCTAssertEqual(host, server.baseURL, make.name)
        }
    }

    func testEmptyReplyIsAConnectionFailure() throws {
        let server = try start(.raw([]))
        for make in transportsUnderTest {
            let error = transportError { try make().send(HTTPRequest(method: .get, url: server.baseURL + "/")) }
            guard case .connectionFailed = error else {
                XCTFail("\(make.name): got \(String(describing: error))")
                continue
            }
        }
    }

    func testInvalidURLsAreRefusedWithoutQuotingThem() {
        for make in transportsUnderTest {
            let transport = make()
            for url in ["file:///etc/shadow", "ftp://127.0.0.1/x", "127.0.0.1/x", "http://", "http://:80/",
                        "http://127.0.0.1:99999/", "http://host/a b?regOTT=SECRET0TT", "gopher://x/?regOTT=SECRET0TT", ""] {
                let error = transportError { try transport.send(HTTPRequest(method: .get, url: url)) }
                guard case .invalidURL = error else {
                    XCTFail("\(make.name): \(url): got \(String(describing: error))")
                    continue
                }
                XCTAssertFalse(String(describing: error).contains("SECRET0TT"), make.name)
            }
        }
    }

    func testHeaderInjectionIsRefused() throws {
        let server = try start(.echo)
        for make in transportsUnderTest {
            let transport = make()
            for headers in [["X-A": "a\r\nX-Injected: 1"], ["X-A": "a\nb"], ["X-A": "a\0b"], ["Bad Name": "x"], ["": "x"],
                            ["X:Y": "z"]] {
                let error = transportError {
                    try transport.send(HTTPRequest(method: .get, url: server.baseURL + "/", headers: headers))
                }
                guard case .invalidRequest = error else {
                    XCTFail("\(make.name): \(headers): got \(String(describing: error))")
                    continue
                }
            }
        }
        XCTAssertEqual(server.acceptedConnections, 0, "refused before connecting")
    }

    func testConsecutiveRequestsShareOneConnection() throws {
        for make in transportsUnderTest {
            let server = try start(.keepAliveEcho)
            let transport = make()
            for index in 0..<3 {
                let response = try transport.send(HTTPRequest(method: .post, url: server.baseURL + "/k\(index)", text: "b\(index)"))
                XCTAssertEqual(response.status, 200, make.name)
                XCTAssertTrue(response.text.hasPrefix("POST /k\(index) HTTP/1.1\r\n"), "\(make.name): \(response.text)")
                XCTAssertTrue(response.text.hasSuffix("b\(index)"), "\(make.name): \(response.text)")
            }
            XCTAssertEqual(server.acceptedConnections, 1, make.name)
            // A failed request discards the connection: the next one starts afresh and works.
            XCTAssertNotNil(transportError { try transport.send(HTTPRequest(method: .get, url: "http://127.0.0.1:\(unusedLocalPort())/x")) })
            XCTAssertEqual(try transport.send(HTTPRequest(method: .get, url: server.baseURL + "/after")).status, 200, make.name)
            XCTAssertEqual(server.acceptedConnections, 2, make.name)
        }
    }

    func testOneConnectionPerRequestWhenReuseIsOff() throws {
        for make in transportsUnderTest {
            let server = try start(.keepAliveEcho)
            let transport = make(.init(reusesConnection: false))
            for index in 0..<3 {
                XCTAssertEqual(try transport.send(HTTPRequest(method: .get, url: server.baseURL + "/n\(index)")).status, 200,
                               make.name)
            }
            XCTAssertEqual(server.acceptedConnections, 3, make.name)
        }
    }

    /// A keep-alive connection the server closed while it sat idle is not used: the next
    /// request goes out on a new connection and succeeds.
    func testIdleConnectionTheServerClosedIsReplaced() throws {
        for make in transportsUnderTest {
            let server = try start(.keepAliveThenClose(readsNextRequest: false))
            let transport = make()
            for index in 0..<3 {
                let response = try transport.send(HTTPRequest(method: .post, url: server.baseURL + "/s\(index)", text: "b\(index)"))
                XCTAssertEqual(response.status, 200, make.name)
                XCTAssertTrue(response.text.hasPrefix("POST /s\(index) HTTP/1.1\r\n"), "\(make.name): \(response.text)")
                XCTAssertTrue(response.text.hasSuffix("b\(index)"), "\(make.name): \(response.text)")
                usleep(50_000)  // the server's close has arrived before the next request
            }
            XCTAssertEqual(server.acceptedConnections, 3, make.name)
            XCTAssertEqual(server.requestsReceived, 3, make.name)
        }
    }

    /// The race the idle check cannot see: the server reads the request on the reused
    /// connection and closes it without a word. Nothing came back to a GET, so it is sent
    /// again on a new connection, once.
    func testGetOnAConnectionTheServerDropsIsRetriedOnANewOne() throws {
        for make in transportsUnderTest {
            let server = try start(.keepAliveThenClose(readsNextRequest: true))
            let transport = make()
            for index in 0..<3 {
                let response = try transport.send(HTTPRequest(method: .get, url: server.baseURL + "/d\(index)"))
                XCTAssertEqual(response.status, 200, make.name)
                XCTAssertTrue(response.text.hasPrefix("GET /d\(index) HTTP/1.1\r\n"), "\(make.name): \(response.text)")
            }
            XCTAssertEqual(server.acceptedConnections, 3, make.name)
            // d0 once; d1 and d2 each on the dropped connection, then again on a new one.
            XCTAssertEqual(server.requestsReceived, 5, make.name)
        }
    }

    /// The same race for a POST: the server may have processed it (a pass 2 counts a wrong
    /// PIN), so PlainHTTPTransport does not send it again (RFC 9110 section 9.2.2) and
    /// reports a broken connection. (libcurl resends it; logins against IP-address backends
    /// go through PlainHTTPTransport.)
    func testPostOnAConnectionTheServerDropsIsNotSentTwice() throws {
        let server = try start(.keepAliveThenClose(readsNextRequest: true))
        let transport = PlainHTTPTransport()
        XCTAssertEqual(try transport.send(HTTPRequest(method: .post, url: server.baseURL + "/p0", text: "a")).status, 200)
        let error = transportError { try transport.send(HTTPRequest(method: .post, url: server.baseURL + "/p1", text: "b")) }
        guard case .connectionFailed(let host, _) = error else { return XCTFail("got \(String(describing: error))") }
        XCTAssertEqual(host, server.baseURL)
        XCTAssertEqual(server.requestsReceived, 2, "p1 was sent once")
        // The next request opens a new connection and works.
        XCTAssertEqual(try transport.send(HTTPRequest(method: .post, url: server.baseURL + "/p2", text: "c")).status, 200)
        XCTAssertEqual(server.acceptedConnections, 2)
    }

    func testAForkedChildNeverUsesItsParentsConnection() throws {
        for make in transportsUnderTest {
            let server = try start(.keepAliveEcho)
            try runForkCheck(make.forkCheckOptions + [server.baseURL + "/fork"])
            // Parent (1 connection, reused for its second request) and child (its own).
            XCTAssertEqual(server.acceptedConnections, 2, make.name)
        }
    }

    func testWorksInAForkedChild() throws {
        let server = try start(.echo)
        for make in transportsUnderTest {
            try runForkCheck(make.forkCheckOptions + [server.baseURL + "/fork"])
        }
    }

    func testConcurrentRequestsFromManyThreads() throws {
        for make in transportsUnderTest {
            let server = try start(.keepAliveEcho)
            let transport = make()
            let results = Results()
            DispatchQueue.concurrentPerform(iterations: 8) { index in
                let response = try? transport.send(HTTPRequest(method: .post, url: server.baseURL + "/t\(index)", text: "body\(index)"))
                results.record(index, response?.text.hasSuffix("body\(index)") == true && response?.status == 200)
            }
            XCTAssertEqual(results.successes, 8, make.name)
        }
    }
}

/// What only libcurl does: TLS, name resolution, proxies, and being a library that may be missing.
final class CurlHTTPTransportTests: XCTestCase {
    private let servers = TestServers()

    override func tearDown() {
        servers.stopAll()
        super.tearDown()
    }

    func testHTTPSToAPlainServerIsATLSFailure() throws {
        let server = try servers.start(.raw(Array("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".utf8), readFirst: false))
        let error = transportError {
            try CurlHTTPTransport().send(HTTPRequest(method: .get, url: "https://127.0.0.1:\(server.port)/"))
        }
        guard case .tlsFailure(let host, _) = error else { return XCTFail("got \(String(describing: error))") }
        XCTAssertEqual(host, "https://127.0.0.1:\(server.port)")
    }

    func testUnresolvableHost() {
        withProxyVariables([:]) {
            let error = transportError {
                try CurlHTTPTransport(configuration: .init(timeout: .seconds(5)))
                    .send(HTTPRequest(method: .get, url: "http://no-such-host.invalid/"))
            }
            XCTAssertEqual(error, .hostNotFound(host: "http://no-such-host.invalid"))
        }
    }

    func testProxyVariableIsHonoured() throws {
        let proxy = try servers.start(.echo)
        try withProxyVariables(["http_proxy": proxy.baseURL]) {
            let response = try CurlHTTPTransport().send(HTTPRequest(method: .get, url: "http://mfa.example.invalid/rps/x"))
            XCTAssertEqual(response.status, 200)
            XCTAssertTrue(response.text.hasPrefix("GET http://mfa.example.invalid/rps/x HTTP/1.1\r\n"), response.text)
        }
    }

    func testMissingLibcurlIsATransportErrorNotACrash() throws {
        let server = try servers.start(.echo)
        try runForkCheck(["--without-libcurl", server.baseURL + "/x"])
        XCTAssertEqual(server.acceptedConnections, 0)
    }
}

/// What only the socket transport does: it sends HTTP and HTTPS to IP addresses and nothing
/// else, and builds the request itself.
final class PlainHTTPTransportTests: XCTestCase {
    private let servers = TestServers()

    override func tearDown() {
        servers.stopAll()
        super.tearDown()
    }

    func testCanSendOnlyHTTPAndHTTPSToAnIPAddressWithoutProxy() {
        withProxyVariables([:]) {
            for url in ["http://127.0.0.1:8005/x", "http://[::1]:80/", "http://10.1.2.3/rps?x=1", "http://[2001:db8::7]/",
                        "https://127.0.0.1:8005/x", "https://[::1]/"] {
                XCTAssertTrue(PlainHTTPTransport.canSend(to: url), url)
            }
            for url in ["https://localhost:8005/x", "http://localhost:8005/x", "http://mfa.example.com/", "https://u@127.0.0.1/",
                        "http://u:p@127.0.0.1/", "http://u@127.0.0.1/", "ftp://127.0.0.1/", "http://127.0.0.1:99999/",
                        "127.0.0.1/x", ""] {
                XCTAssertFalse(PlainHTTPTransport.canSend(to: url), url)
            }
        }
        // The variables libcurl would use for an http URL send it to curl; the others do not
        // (libcurl ignores upper-case HTTP_PROXY, and an empty value means no proxy).
        for (name, value, plain) in [("http_proxy", "http://127.0.0.1:3128", false), ("all_proxy", "http://127.0.0.1:3128", false),
                                     ("ALL_PROXY", "socks5://127.0.0.1:1080", false), ("https_proxy", "http://127.0.0.1:3128", true),
                                     ("HTTP_PROXY", "http://127.0.0.1:3128", true), ("http_proxy", "", true)] {
            withProxyVariables([name: value]) {
                XCTAssertEqual(PlainHTTPTransport.canSend(to: "http://127.0.0.1:8005/x"), plain, "\(name)=\(value)")
            }
        }
        // For an https URL: https_proxy in either case, then all_proxy / ALL_PROXY.
        for (name, value, own) in [("https_proxy", "http://127.0.0.1:3128", false), ("HTTPS_PROXY", "http://127.0.0.1:3128", false),
                                   ("all_proxy", "http://127.0.0.1:3128", false), ("http_proxy", "http://127.0.0.1:3128", true)] {
            withProxyVariables([name: value]) {
                XCTAssertEqual(PlainHTTPTransport.canSend(to: "https://127.0.0.1:8005/x"), own, "\(name)=\(value)")
            }
        }
    }

    /// `send` keeps to what `canSend` promises: anything else is refused before connecting.
    func testURLsLeftToCurlAreRefused() throws {
        let server = try servers.start(.echo)
        for url in ["https://localhost:\(server.port)/", "http://localhost:\(server.port)/",
                    "http://u:p@127.0.0.1:\(server.port)/"] {
            let error = transportError { try PlainHTTPTransport().send(HTTPRequest(method: .get, url: url)) }
            guard case .invalidURL(let reason) = error else {
                XCTFail("\(url): got \(String(describing: error))")
                continue
            }
            XCTAssertFalse(reason.contains("u:p"), reason)
        }
        XCTAssertEqual(server.acceptedConnections, 0)
    }

    /// Host and the framing headers are the transport's: a caller's value would disagree with
    /// the URL or the body actually sent (request smuggling), so it is refused, not sent.
    func testHeadersTheTransportManagesAreRefused() throws {
        let server = try servers.start(.echo)
        let transports: [(String, any HTTPTransport)] = [("plain", PlainHTTPTransport()), ("curl", CurlHTTPTransport())]
        for (name, transport) in transports {
            for headers in [["Host": "mfa.example.com"], ["host": "127.0.0.1"], ["Content-Length": "1"],
                            ["Transfer-Encoding": "chunked"], ["Connection": "close"]] {
                let error = transportError {
                    try transport.send(HTTPRequest(method: .post, url: server.baseURL + "/", headers: headers, text: "abc"))
                }
                guard case .invalidRequest = error else {
                    XCTFail("\(name) \(headers): got \(String(describing: error))")
                    continue
                }
            }
        }
        XCTAssertEqual(server.acceptedConnections, 0)
    }
}

/// Routing: each request goes to the transport that can send it, as the environment says.
final class LinuxHTTPTransportTests: XCTestCase {
    private let servers = TestServers()

    override func tearDown() {
        servers.stopAll()
        super.tearDown()
    }

    func testRequestToAnIPAddressWorks() throws {
        let server = try servers.start(.keepAliveEcho)
        try withProxyVariables([:]) {
            let transport = LinuxHTTPTransport()
            for index in 0..<2 {
                let response = try transport.send(HTTPRequest(method: .post, url: server.baseURL + "/l\(index)", text: "b\(index)"))
                XCTAssertEqual(response.status, 200)
                let request = EchoedRequest(response)
                XCTAssertEqual(request.line, "POST /l\(index) HTTP/1.1")
                XCTAssertEqual(request.values("Host"), ["127.0.0.1:\(server.port)"])
                XCTAssertEqual(request.body, "b\(index)")
            }
            XCTAssertEqual(server.acceptedConnections, 1, "keep-alive through the router too")
        }
    }

    /// A host name is beyond the socket transport (it never resolves names), so this one can
    /// only have gone through libcurl.
    func testRequestToAHostNameWorks() throws {
        let server = try servers.start(.echo)
        try withProxyVariables([:]) {
            let url = "http://localhost:\(server.port)/name"
            guard case .invalidURL = transportError({ try PlainHTTPTransport().send(HTTPRequest(method: .get, url: url)) }) else {
                return XCTFail("the socket transport sent a request to a host name")
            }
            let response = try LinuxHTTPTransport().send(HTTPRequest(method: .get, url: url))
            XCTAssertEqual(response.status, 200)
            XCTAssertEqual(EchoedRequest(response).line, "GET /name HTTP/1.1")
            XCTAssertEqual(EchoedRequest(response).values("Host"), ["localhost:\(server.port)"])
        }
    }

    func testProxyVariableIsHonoured() throws {
        let proxy = try servers.start(.echo)
        try withProxyVariables(["http_proxy": proxy.baseURL]) {
            let response = try LinuxHTTPTransport().send(HTTPRequest(method: .get, url: "http://mfa.example.invalid/x"))
            XCTAssertEqual(response.status, 200)
            XCTAssertTrue(response.text.hasPrefix("GET http://mfa.example.invalid/x HTTP/1.1\r\n"), response.text)
        }
    }

    /// With a proxy configured even an IP address goes through it (via libcurl), exactly when
    /// libcurl itself would use that variable.
    func testProxyVariablesDecideTheRouteForIPAddresses() throws {
        for (name, viaProxy) in [("http_proxy", true), ("all_proxy", true), ("ALL_PROXY", true), ("HTTP_PROXY", false),
                                 ("https_proxy", false)] {
            let proxy = try servers.start(.echo)
            let target = try servers.start(.echo)
            try withProxyVariables([name: proxy.baseURL]) {
                let response = try LinuxHTTPTransport().send(HTTPRequest(method: .get, url: target.baseURL + "/p"))
                XCTAssertEqual(response.status, 200, name)
                let line = EchoedRequest(response).line
                XCTAssertEqual(line, viaProxy ? "GET \(target.baseURL)/p HTTP/1.1" : "GET /p HTTP/1.1", name)
            }
            XCTAssertEqual(proxy.acceptedConnections, viaProxy ? 1 : 0, name)
            XCTAssertEqual(target.acceptedConnections, viaProxy ? 0 : 1, name)
        }
    }
}

/// Runs mpin-fork-check with `arguments` and expects it to exit 0.
func runForkCheck(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: try helperExecutable("mpin-fork-check"))
    process.arguments = arguments
    try process.run()
    let deadline = Date().addingTimeInterval(20)
    while process.isRunning, Date() < deadline { usleep(10_000) }
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
    XCTAssertEqual(process.terminationReason, .exit, file: file, line: line)
    XCTAssertEqual(process.terminationStatus, 0, "mpin-fork-check \(arguments.joined(separator: " ")) failed",
                   file: file, line: line)
}

/// Thread-safe tally for the concurrency test.
private final class Results: @unchecked Sendable {
    private let lock = NSLock()
    private var ok: Set<Int> = []
    func record(_ index: Int, _ success: Bool) {
        lock.lock()
        if success { ok.insert(index) }
        lock.unlock()
    }
    var successes: Int {
        lock.lock()
        defer { lock.unlock() }
        return ok.count
    }
}
