import MPinClient
import MPinJSON
import MPinLinux
import MPinLogin
import MPinTestSupport
import MPinWire
import Synchronization
import XCTest

/// docs/SECURITY.md §3: nothing a host keeps comes from an answer it has not authenticated, and the
/// URLs a host follows stay on the backend's origin unless TLS names the backend. The attacker here
/// holds the backend's address for a moment (as a local user may while mpin-server restarts):
/// `PortHolder` answers in place of the backend for the requests a test chooses.
final class KeptStateTrustTests: XCTestCase {
    /// Answers for the backend what `answer` returns (nil: the real backend answers), and
    /// records every request sent to the attacker's own origin.
    final class PortHolder: HTTPTransport, Sendable {
        typealias Answer = @Sendable (HTTPRequest) -> HTTPResponse?
        static let attackerOrigin = "http://127.0.0.1:6666"
        let backend: MPinBackendDouble
        private let state = Mutex<(answer: Answer, toAttacker: [String])>(({ _ in nil }, []))

        init(_ backend: MPinBackendDouble) { self.backend = backend }

        var answer: Answer {
            get { state.withLock { $0.answer } }
            set { state.withLock { $0.answer = newValue } }
        }
        var requestsToAttacker: [String] { state.withLock { $0.toAttacker } }

        func send(_ request: HTTPRequest) throws(HTTPTransportError) -> HTTPResponse {
            if request.url.hasPrefix(Self.attackerOrigin) {
                // The attacker's own port relays to the real backend (and could rewrite anything).
                state.withLock { $0.toAttacker.append(request.url) }
                var relayed = request
                relayed.url = "http://mpin.test" + request.url.dropFirst(Self.attackerOrigin.count)
                return try backend.send(relayed)
            }
            if let answered = state.withLock({ $0.answer })(request) { return answered }
            return try backend.send(request)
        }
    }

    private func harness() throws -> (LoginHarness, PortHolder) {
        let h = try LoginHarness()
        let holder = PortHolder(h.backend)
        h.network = holder
        try h.register(pin: "1234")
        return (h, holder)
    }

    /// The backend's real settings with every URL made absolute on the attacker's port.
    private static func settingsPointingAway(_ backend: MPinBackendDouble) -> [UInt8] {
        guard case .object(let members) = backend.clientSettings else { return [] }
        let moved = members.map { member -> (key: String, value: JSONValue) in
            guard let text = member.value.stringValue, text.hasPrefix("/") else { return member }
            return (member.key, .string(PortHolder.attackerOrigin + text))
        }
        return JSONValue.object(moved).serialized
    }

    /// Settings (§3): the port holder answers one login with client settings that point at his own
    /// port and an unsigned "wrong PIN". The host follows no URL off the backend's origin, keeps
    /// nothing, and the next logins (the real backend back) go to the backend only.
    func testSettingsFromWhoeverHoldsThePortAreNotFollowedOrKept() throws {
        let (h, holder) = try harness()
        let away = Self.settingsPointingAway(h.backend)
        holder.answer = { r in
            if r.url.hasSuffix("/clientSettings") { return HTTPResponse(status: 200, body: away) }
            if r.url.hasSuffix("/mpinAuthenticate") { return HTTPResponse(status: 401, body: Array(#"{"message":"Wrong PIN."}"#.utf8)) }
            return nil
        }
        let attacked = h.login(pin: "1234")
        XCTAssertNotEqual(attacked.outcome, .success)
        XCTAssertNotEqual(attacked.outcome, .wrongPIN, "an unsigned wrong PIN was believed")
        XCTAssertEqual(holder.requestsToAttacker, [], "the login followed the held port's settings off the backend's origin")
        XCTAssertFalse(h.cacheExists, "settings from an unauthenticated answer were kept")

        holder.answer = { _ in nil }
        for _ in 0..<3 { XCTAssertEqual(h.login(pin: "1234").outcome, .success) }
        XCTAssertEqual(holder.requestsToAttacker, [])
        XCTAssertTrue(h.cacheExists, "the real backend's settings are kept after its signed verdict")
    }

    /// Settings kept before (from the real backend) are not replaced by what the port holder
    /// sends after an unsigned wrong PIN on them.
    func testUnsignedWrongPINKeepsNothing() throws {
        let (h, holder) = try harness()
        XCTAssertEqual(h.login(pin: "1234").outcome, .success)
        XCTAssertTrue(h.cacheExists)
        let backend = h.backend
        holder.answer = { r in
            if r.url.hasSuffix("/clientSettings") {
                guard case .object(let m) = backend.clientSettings else { return nil }
                return HTTPResponse(status: 200, body: JSONValue.object(m + [(key: "heldPort", value: .bool(true))]).serialized)
            }
            if r.url.hasSuffix("/mpinAuthenticate") { return HTTPResponse(status: 401) }
            return nil
        }
        guard case .failed(let why) = h.login(pin: "1234").outcome else { return XCTFail("an unsigned wrong PIN was believed") }
        XCTAssertTrue(why.contains("not signed"), why)
        let kept = h.cache.read()
        XCTAssertNil(kept?["heldPort"], "settings sent with an unsigned wrong PIN were kept")
    }

    /// With TLS that names the backend (https and cacert), settings may name other origins, as
    /// the original Milagro server's do: the URLs are followed.
    func testOtherOriginsAreFollowedWhenTLSNamesTheBackend() throws {
        let h = try LoginHarness()
        h.config.caFile = "/etc/mpin/ca.pem"
        XCTAssertTrue(h.config.authenticatesByTLS("https://mpin.example.org"))
        XCTAssertFalse(h.config.authenticatesByTLS("http://mpin.example.org"))
        h.config.caFile = ""
        XCTAssertFalse(h.config.authenticatesByTLS("https://mpin.example.org"), "the system's CAs do not name the backend")

        let sdk = MPinSDK(context: h.platform)
        XCTAssertEqual(sdk.initialize().code, .ok)
        XCTAssertTrue(sdk.confine(toOriginOf: "http://mpin.test"))
        XCTAssertEqual(sdk.setBackend("http://mpin.test").code, .ok)
        let user = sdk.makeNewUser(id: "x@example.org")
        XCTAssertEqual(sdk.startRegistration(user).code, .ok, "same origin: followed")
        // Port 80 written out is the same origin; another port, host or scheme is not.
        XCTAssertTrue(sdk.confine(toOriginOf: "http://mpin.test:80/rps"))
        XCTAssertEqual(sdk.setBackend("http://mpin.test").code, .ok)
        XCTAssertTrue(sdk.confine(toOriginOf: "http://mpin.test:8080"))
        XCTAssertEqual(sdk.setBackend("http://mpin.test").code, .untrustedDomainError)
        XCTAssertTrue(sdk.confine(toOriginOf: "https://mpin.test"))
        XCTAssertEqual(sdk.setBackend("http://mpin.test").code, .untrustedDomainError)
    }

    /// Interoperability: a backend whose settings name absolute URLs on other origins (the
    /// original Milagro server's D-TA on another port) keeps working over https with `cacert`;
    /// without a CA of the host's own the same login is refused before the PIN proof leaves.
    func testSettingsOnOtherOriginsWorkOverHTTPSWithCACert() throws {
        let double = try MPinBackendDouble(origin: "https://mpin.test", dtaOrigin: "https://mpin.test:8443/dta")
        let h = try LoginHarness(backendOrigin: "https://mpin.test", double: double)
        h.config.caFile = "/etc/mpin/backend-ca.pem"
        try h.register(pin: "1234")
        let run = h.login(pin: "1234")
        XCTAssertEqual(run.outcome, .success)
        XCTAssertTrue(double.log.contains { $0.request.url.hasPrefix("https://mpin.test:8443/dta/") }, "the D-TA on its own port was asked")

        // A host of its own (the first one keeps the day's D-TA share after its success).
        let other = try LoginHarness(backendOrigin: "https://mpin.test", double: double)
        try other.register(unixUser: "bob", identity: "bob@example.org", pin: "1234")
        let refused = other.login("bob", pin: "1234")
        guard case .unavailable(let why) = refused.outcome else { return XCTFail("followed another origin without TLS naming the backend: \(refused.outcome)") }
        XCTAssertTrue(why.contains("not on the backend's origin"), why)
        XCTAssertFalse(refused.routes.contains(.pass2), "no PIN proof was sent")
    }

    /// Revoked (§3): an unsigned "revoked" (410 on the time permit) is not recorded: account
    /// management goes on accepting the user. A signed one is.
    func testOnlyASignedRevokedIsRecorded() throws {
        let (h, holder) = try harness()
        holder.answer = { r in r.url.contains("/timePermit/") ? HTTPResponse(status: 410) : nil }
        guard case .failed(let why) = h.login(pin: "1234").outcome else { return XCTFail("an unsigned revoked was believed") }
        XCTAssertTrue(why.contains("not signed"), why)
        XCTAssertEqual(try Login(config: h.config, platform: h.platform).accountState(unixUser: "alice"), .registered)

        holder.answer = { _ in nil }
        h.backend.revokeAll()
        XCTAssertEqual(h.login(pin: "1234").outcome, .revoked)
        XCTAssertEqual(try Login(config: h.config, platform: h.platform).accountState(unixUser: "alice"), .revoked)
    }

    /// The registration (§2): a host's registration asks the backend to mark the mpinId
    /// for host logins; a relay that takes the mark off the request makes the registration
    /// fail, and nothing is stored.
    func testHostRegistrationMustComeBackMarked() throws {
        let h = try LoginHarness()
        let sdk = MPinSDK(context: h.platform)
        XCTAssertEqual(sdk.initialize(config: ["backend": "http://mpin.test"]).code, .ok)
        sdk.registersHostTokens = true
        let marked = sdk.makeNewUser(id: "alice@example.org")
        XCTAssertEqual(sdk.startRegistration(marked).code, .ok)
        XCTAssertTrue(MPinIdentity.isHostScoped(Hex.decode(marked.mpinIdHex) ?? []))

        let backend = h.backend
        let stripping = ScriptedTransport { (r) throws(HTTPTransportError) in
            var relayed = r
            if r.method == .put, let body = r.body, case .object(let m)? = try? JSONParser().parse(body) {
                relayed.body = JSONValue.object(m.filter { $0.key != "scope" }).serialized
            }
            return try backend.send(relayed)
        }
        let relayedSDK = MPinSDK(context: TestContext(transport: stripping, secureStorage: MemoryStorage(), nonSecureStorage: MemoryStorage()))
        XCTAssertEqual(relayedSDK.initialize(config: ["backend": "http://mpin.test"]).code, .ok)
        relayedSDK.registersHostTokens = true
        let stripped = relayedSDK.makeNewUser(id: "bob@example.org")
        XCTAssertEqual(relayedSDK.startRegistration(stripped).code, .identityNotAuthorized)
        XCTAssertTrue(relayedSDK.listUsers().1.isEmpty, "an unmarked registration was kept")
    }
}
