import MPinClient
import MPinLogin
import MPinTestSupport
import Synchronization
import XCTest

/// A backend of several nodes (`backend = URL, URL`): a login leaves a node that fails before
/// the PIN proof for the next one, within its one budget, and never leaves one that may have
/// seen pass 2.
final class LoginFailoverTests: XCTestCase {
    static let first = "http://mpin.test", second = "http://node-b.test"

    /// Two nodes in front of one backend double (they share the registrations, as mpin-server
    /// nodes on one database do). `firstNode` decides what the first node does with a request:
    /// nil passes it on. Its state is locked, as `HTTPTransport` promises calls from any thread.
    final class TwoNodes: HTTPTransport, Sendable {
        typealias Answer = @Sendable (HTTPRequest) throws(HTTPTransportError) -> HTTPResponse?
        let backend: MPinBackendDouble
        private let state = Mutex<(firstNode: Answer, contacted: [String])>(({ _ in nil }, []))

        init(_ backend: MPinBackendDouble) { self.backend = backend }

        var firstNode: Answer {
            get { state.withLock { $0.firstNode } }
            set { state.withLock { $0.firstNode = newValue } }
        }
        /// The nodes asked, in order.
        var contacted: [String] { state.withLock { $0.contacted } }

        func send(_ request: HTTPRequest) throws(HTTPTransportError) -> HTTPResponse {
            if request.url.hasPrefix(LoginFailoverTests.first) {
                let answer = state.withLock { $0.contacted.append("first"); return $0.firstNode }
                if let answered = try answer(request) { return answered }
                return try backend.send(request)
            }
            if request.url.hasPrefix(LoginFailoverTests.second) {
                state.withLock { $0.contacted.append("second") }
                var r = request
                r.url = LoginFailoverTests.first + request.url.dropFirst(LoginFailoverTests.second.count)
                return try backend.send(r)
            }
            return try backend.send(request)
        }
    }

    private func harness(timeout: Double = 10) throws -> (LoginHarness, TwoNodes) {
        let h = try LoginHarness(timeout: timeout)
        XCTAssertNil(h.config.set("backend", "\(Self.first), \(Self.second)"))
        try h.register()
        let nodes = TwoNodes(h.backend)
        h.network = nodes
        return (h, nodes)
    }

    private func failovers(_ run: LoginHarness.Run) -> [String] {
        run.events.compactMap { if case .failover(let origin) = $0 { origin } else { nil } }
    }

    func testARefusingFirstNodeIsLeftForTheSecond() throws {
        let (h, nodes) = try harness()
        nodes.firstNode = { (r) throws(HTTPTransportError) in throw .connectionRefused(host: "mpin.test") }
        let run = h.login(pin: "1234")
        XCTAssertEqual(run.outcome, .success)
        XCTAssertEqual(failovers(run), [Self.second])
        XCTAssertEqual(nodes.contacted.first, "first")
        XCTAssertEqual(h.backend.count(.pass2), 1)
    }

    /// A node that accepts and never answers costs `connect_timeout`, not the whole budget.
    func testASilentFirstNodeCostsTheConnectTimeout() throws {
        let (h, nodes) = try harness(timeout: 10)
        h.config.connectTimeout = 0.3
        nodes.firstNode = { (r) throws(HTTPTransportError) in
            let wait = r.timeout ?? .seconds(10)
            Thread.sleep(forTimeInterval: Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18)
            throw .timedOut(host: "mpin.test", seconds: 0)
        }
        let run = h.login(pin: "1234")
        XCTAssertEqual(run.outcome, .success)
        XCTAssertEqual(failovers(run), [Self.second])
        XCTAssertLessThan(run.elapsed, .milliseconds(800), "one connect_timeout (0.3 s) and a normal login")
        XCTAssertEqual(nodes.contacted.filter { $0 == "first" }.count, 1, "a silent node is asked once, not again with fresh settings")
    }

    /// The first node failing after pass 2 (the PIN proof) ends the login there: a second
    /// node would count one wrong PIN twice.
    func testNoFailoverOnceThePINProofWasSent() throws {
        let (h, nodes) = try harness()
        nodes.firstNode = { (r) throws(HTTPTransportError) in r.url.hasSuffix("/mpinAuthenticate") ? HTTPResponse(status: 503) : nil }
        let run = h.login(pin: "1234")
        guard case .unavailable = run.outcome else { return XCTFail("\(run.outcome)") }
        XCTAssertEqual(failovers(run), [])
        XCTAssertFalse(nodes.contacted.contains("second"))
        XCTAssertEqual(h.backend.count(.pass2), 1)
    }

    /// A wrong PIN is the answer, not a node failure.
    func testAWrongPINIsNotRetriedElsewhere() throws {
        let (h, nodes) = try harness()
        XCTAssertEqual(h.login(pin: "9999").outcome, .wrongPIN)
        XCTAssertFalse(nodes.contacted.contains("second"))
    }

    func testAllNodesDownIsUnavailableWithinTheBudget() throws {
        let (h, nodes) = try harness(timeout: 2)
        nodes.firstNode = { (r) throws(HTTPTransportError) in throw .connectionRefused(host: "mpin.test") }
        h.network = FailingSecond(nodes)
        let run = h.login(pin: "1234")
        guard case .unavailable = run.outcome else { return XCTFail("\(run.outcome)") }
        XCTAssertEqual(failovers(run), [Self.second])
        XCTAssertLessThan(run.elapsed, .seconds(2))
    }

    /// Kept settings of a node that is down stay kept: the node is down, not changed.
    func testADownNodeKeepsItsKeptSettings() throws {
        let (h, nodes) = try harness()
        XCTAssertEqual(h.login(pin: "1234").outcome, .success)
        XCTAssertNotNil(h.cache.read())
        nodes.firstNode = { (r) throws(HTTPTransportError) in throw .connectionRefused(host: "mpin.test") }
        XCTAssertEqual(h.login(pin: "1234").outcome, .success)
        XCTAssertNotNil(h.cache.read(), "the first node's kept settings survive its outage")
    }

    func testNodesForARegistration() {
        var c = LoginConfig()
        XCTAssertNil(c.set("backend", "http://a.test, http://b.test/ ,http://c.test"))
        XCTAssertEqual(c.backend, "http://a.test")
        XCTAssertEqual(c.backends, ["http://a.test", "http://b.test/", "http://c.test"])
        XCTAssertEqual(c.nodes(for: "http://b.test"), ["http://b.test", "http://a.test", "http://c.test"])
        XCTAssertEqual(c.nodes(for: "http://elsewhere.test"), ["http://elsewhere.test"], "another backend is tried alone")
        XCTAssertNotNil(c.set("backend", "http://a.test, ftp://b.test"))
        XCTAssertNotNil(c.set("backend", ""))
        XCTAssertNil(c.set("connect_timeout", "0.5"))
        XCTAssertEqual(c.connectTimeout, 0.5)
        XCTAssertNotNil(c.set("connect_timeout", "0"))
        XCTAssertNotNil(c.set("connect_timeout", "61"))
    }
}

/// The second node refusing too.
private struct FailingSecond: HTTPTransport {
    let nodes: LoginFailoverTests.TwoNodes
    init(_ nodes: LoginFailoverTests.TwoNodes) { self.nodes = nodes }
    func send(_ request: HTTPRequest) throws(HTTPTransportError) -> HTTPResponse {
        if request.url.hasPrefix(LoginFailoverTests.second) { throw .connectionRefused(host: "node-b.test") }
        return try nodes.send(request)
    }
}
