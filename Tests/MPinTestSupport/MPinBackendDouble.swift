#if canImport(Glibc)
import Glibc
#endif
import MPinClient
import MPinCrypto
import MPinJSON
import MPinWire
import Synchronization

/// An M-Pin backend inside the test process: an HTTPTransport that answers the client core's
/// requests as mpin-server does (the RPS at `origin`, the second D-TA at `dtaOrigin`), with
/// real cryptography, so that a right PIN succeeds and a wrong one fails for the reason it
/// fails against a real server, not because a script says so.
///
/// It issues identities (registration through the SDK works against it), both halves of the
/// client secret and of each day's time permit from two master-secret shares, and checks pass 2
/// with those shares: V + s·(UT + y·HTID) must be the point at infinity. The real server's
/// check e(Q, V)·e(sQ, UT + y·HTID) = 1 (MPin.server2) is the same statement for a verifier
/// that holds only sQ, since e(Q, ·) is injective on G1; holding s, the double pays two scalar
/// multiplications instead of a pairing.
///
/// Tests steer it like a misbehaving network or a reconfigured server: `inject` a status, a
/// transport error or latency per route, `moveEndpoints` so that kept client settings go
/// stale. Every request is logged with its route.
package final class MPinBackendDouble: HTTPTransport, Sendable {
    /// The requests the backend answers.
    package enum Route: String, Sendable, CaseIterable {
        case clientSettings, register, signature, dtaClientSecret, timePermit, dtaTimePermit, pass1, pass2, authenticate
    }

    /// What a route does instead of answering normally.
    package enum Fault: Sendable {
        /// Answers with this HTTP status and an empty body.
        case status(Int)
        /// Fails as the transport would.
        case transport(HTTPTransportError)
        /// Answers after this long, as a slow network would. Like a real transport it waits at
        /// most the request's timeout and then throws `.timedOut`.
        case latency(Duration)
    }

    /// Wrong PINs in a row after which an identity is blocked (HTTP 410), as mpin-server's default.
    package static let maxAttempts = 3

    package let origin: String
    package let dtaOrigin: String
    package let appID = "0123456789abcdef0123456789abcdef"
    /// The two master-secret shares: the first D-TA's (served by the RPS) and the second D-TA's.
    private let share1: [UInt8]
    private let share2: [UInt8]

    private struct Pass1 {
        var u: [UInt8]
        var ut: [UInt8]
        var y: [UInt8]
    }

    private struct State {
        var log: [(route: Route?, request: HTTPRequest)] = []
        var faults: [Route: Fault] = [:]
        var rpsPath = "/rps"
        var regOTTs: [String: String] = [:]
        var pass1: [String: Pass1] = [:]
        var verdicts: [String: (mpinIdHex: String, ok: Bool)] = [:]
        var wrongPINs: [String: Int] = [:]
        var blocked: Set<String> = []
        var verdictSecretKey: [UInt8] = []
        var verdictPublicKey: [UInt8] = []
        var signsVerdicts = true
    }
    private let state = Mutex(State())

    /// `dtaOrigin`: where the second D-TA answers; by default under the backend's own origin
    /// (`/dta`, as mpin-server serves it), which a host over plain http confines its logins to.
    package init(origin: String = "http://mpin.test", dtaOrigin: String? = nil) throws {
        self.origin = origin
        self.dtaOrigin = dtaOrigin ?? origin + "/dta"
        share1 = try MPin.randomMasterSecret()
        share2 = try MPin.randomMasterSecret()
        try replaceVerdictKey()
    }

    /// Signs verdicts with a new key from now on (an impostor on the backend's address, for a
    /// host that pinned the old one).
    package func replaceVerdictKey() throws {
        let pair = try Schnorr.generateKeyPair()
        state.withLock { $0.verdictSecretKey = pair.secretKey; $0.verdictPublicKey = pair.publicKey }
    }

    /// Revokes every identity registered so far: their time permits are refused (410).
    package func revokeAll() { state.withLock { $0.blocked.formUnion($0.regOTTs.keys) } }

    /// Undoes `revokeAll` (and every block): time permits are issued again.
    package func reinstateAll() { state.withLock { $0.blocked.removeAll() } }

    /// Whether the backend publishes a verdict key and signs its verdicts (a Milagro RPS does not).
    package func signVerdicts(_ on: Bool) { state.withLock { $0.signsVerdicts = on } }

    // MARK: Steering

    /// From now on `route` does `fault` (nil: answers normally again).
    package func inject(_ fault: Fault?, at route: Route) { state.withLock { $0.faults[route] = fault } }

    /// Serves the RPS endpoints under `path` instead of `/rps`: client settings fetched before
    /// name endpoints that now answer 404, as after a backend's reconfiguration.
    package func moveEndpoints(to path: String) { state.withLock { $0.rpsPath = path } }

    /// Every request so far, with the route it matched (nil: none, answered 404).
    package var log: [(route: Route?, request: HTTPRequest)] { state.withLock { $0.log } }

    /// Forgets the requests logged so far (say, those of a registration done to set a test up).
    package func clearLog() { state.withLock { $0.log = [] } }

    /// The routes requested so far, in order.
    package var routes: [Route?] { log.map(\.route) }

    /// How many requests `route` received.
    package func count(_ route: Route) -> Int { log.filter { $0.route == route }.count }

    /// The secrets the backend handed out (regOTTs, authOTTs), for tests that check they leak nowhere.
    package var issuedSecrets: [String] { state.withLock { Array($0.regOTTs.values) + Array($0.verdicts.keys) } }

    /// Where the settings send clients for the second shares: relative when the D-TA is under
    /// the backend's own origin (as mpin-server's `/dta/`), so that every node serves it.
    private var certivoxURL: String {
        Self.origin(of: dtaOrigin) == Self.origin(of: origin) ? Self.path(of: dtaOrigin) + "/" : dtaOrigin + "/"
    }

    /// The client settings the backend publishes now.
    package var clientSettings: JSONValue {
        let (rps, key) = state.withLock { ($0.rpsPath, $0.signsVerdicts ? Hex.encode($0.verdictPublicKey) : "") }
        var members: [(key: String, value: JSONValue)] = [
            ("mpinAuthServerURL", .string(rps)), ("timePermitsURL", .string(rps + "/timePermit")),
            ("registerURL", .string(rps + "/user")), ("signatureURL", .string(rps + "/signature")),
            ("authenticateURL", .string("/mpinAuthenticate")), ("certivoxURL", .string(certivoxURL)),
            ("appID", .string(appID)), ("usePermits", .bool(true)), ("requestOTP", .bool(false)),
            ("accessNumberDigits", .number("7")), ("cSum", .number("1")), ("accessNumberUseCheckSum", .bool(true)),
        ]
        if !key.isEmpty { members.append((key: "verdictKey", value: .string(key))) }
        return .object(members)
    }

    // MARK: HTTPTransport

    package func send(_ request: HTTPRequest) throws(HTTPTransportError) -> HTTPResponse {
        guard case .success(let url) = URLOrigin.parse(request.url) else { throw .invalidURL(reason: "not absolute") }
        let route = self.route(of: request, url: url)
        let fault: Fault? = state.withLock { s in
            s.log.append((route, request))
            return route.flatMap { s.faults[$0] }
        }
        switch fault {
        case .status(let code)?: return HTTPResponse(status: code)
        case .transport(let error)?: throw error
        case .latency(let delay)?:
            if let limit = request.timeout, limit < delay {
                Self.sleep(limit)
                throw .timedOut(host: url.display, seconds: Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18)
            }
            Self.sleep(delay)
        case nil: break
        }
        guard let route else { return HTTPResponse(status: 404) }
        let query = url.target.firstIndex(of: "?").map { String(url.target[url.target.index(after: $0)...]) } ?? ""
        let parameters = FormEncoding.decode(query) ?? []
        let body = (try? JSONParser().parse(request.body ?? [])) ?? .object([])
        let answer: (Int, JSONValue)
        switch route {
        case .clientSettings: answer = (200, clientSettings)
        case .register: answer = register(body)
        case .signature: answer = signature(mpinIdHex: String(url.path.split(separator: "/").last ?? ""), parameters)
        case .dtaClientSecret: answer = dtaClientSecret(parameters)
        case .timePermit:
            answer = timePermit(mpinIdHex: String(url.path.split(separator: "/").last ?? ""),
                                nonce: Verdict.nonce(fromHex: parameters.first(where: { $0.0 == Verdict.nonceParameter })?.1))
        case .dtaTimePermit: answer = dtaTimePermit(parameters)
        case .pass1: answer = pass1(body)
        case .pass2: answer = pass2(body)
        case .authenticate: answer = authenticate(body)
        }
        return HTTPResponse(status: answer.0, headers: ["Content-Type": "application/json"],
                            body: answer.0 == 200 || answer.1 != .null ? answer.1.serialized : [])
    }

    private func route(of request: HTTPRequest, url: URLOrigin) -> Route? {
        let rps = state.withLock { $0.rpsPath }
        let path = String(url.path)
        let onRPS = url.display == Self.origin(of: origin), onDTA = url.display == Self.origin(of: dtaOrigin)
        let dta = Self.path(of: dtaOrigin)
        switch (request.method, path) {
        case (.get, "/rps/clientSettings") where onRPS: return .clientSettings
        case (.put, rps + "/user") where onRPS: return .register
        case (.get, _) where onRPS && path.hasPrefix(rps + "/signature/"): return .signature
        case (.get, _) where onRPS && path.hasPrefix(rps + "/timePermit/"): return .timePermit
        case (.post, rps + "/pass1") where onRPS: return .pass1
        case (.post, rps + "/pass2") where onRPS: return .pass2
        case (.post, "/mpinAuthenticate") where onRPS: return .authenticate
        case (.get, dta + "/clientSecret") where onDTA: return .dtaClientSecret
        case (.get, dta + "/timePermit") where onDTA: return .dtaTimePermit
        default: return nil
        }
    }

    /// The path of a base URL without its trailing `/` ("" for the root).
    private static func path(of url: String) -> String {
        guard case .success(let o) = URLOrigin.parse(url) else { return "" }
        var p = Substring(o.path)
        while p.last == "/" { p = p.dropLast() }
        return String(p)
    }

    private static func origin(of url: String) -> String {
        guard case .success(let o) = URLOrigin.parse(url) else { return url }
        return o.display
    }

    // MARK: Registration

    private func register(_ body: JSONValue) -> (Int, JSONValue) {
        guard let userID = body["userId"]?.stringValue, !userID.isEmpty,
              let salt = try? SystemRandom.bytes(16), let ott = try? SystemRandom.bytes(16) else { return (400, .null) }
        // As mpin-server: a host's registration is marked in its mpinId.
        let scope = body["scope"]?.stringValue
        guard scope == nil || scope == MPinIdentity.hostScope else { return (400, .null) }
        let mpinIdHex = Hex.encode(MPinIdentity.build(userID: userID, mobile: 1, issued: .now(), salt: salt, scope: scope))
        let regOTT = Hex.encode(ott)
        state.withLock { $0.regOTTs[mpinIdHex] = regOTT }
        return (200, .object([("mpinId", .string(mpinIdHex)), ("regOTT", .string(regOTT)), ("active", .bool(true))]))
    }

    private func signature(mpinIdHex: String, _ parameters: [(String, String)]) -> (Int, JSONValue) {
        let expected = state.withLock { $0.regOTTs[mpinIdHex] }
        guard let expected, parameters.first(where: { $0.0 == "regOTT" })?.1 == expected,
              let mpinId = Hex.decode(mpinIdHex) else { return (401, .null) }
        let hashed = MPin.hashID(mpinId)
        guard let share = try? MPin.clientSecret(masterSecret: share1, hashedID: hashed) else { return (500, .null) }
        let params = FormEncoding.encode([("mobile", "1"), ("app_id", appID), ("hash_mpin_id", Hex.encode(hashed)),
                                          ("signature", "unchecked")])
        return (200, .object([("clientSecretShare", .string(Hex.encode(share))), ("params", .string(params))]))
    }

    private func dtaClientSecret(_ parameters: [(String, String)]) -> (Int, JSONValue) {
        guard let hashed = parameters.first(where: { $0.0 == "hash_mpin_id" }).flatMap({ Hex.decode($0.1, length: 32) }),
              let share = try? MPin.clientSecret(masterSecret: share2, hashedID: hashed) else { return (400, .null) }
        return (200, .object([("clientSecret", .string(Hex.encode(share)))]))
    }

    // MARK: Authentication

    /// Today's time-permit day.
    private var today: Int32 { WireTime.day(.now()) }

    /// A blocked identity gets 410, signed over the host's nonce as mpin-server signs a revoked one.
    private func timePermit(mpinIdHex: String, nonce: [UInt8]?) -> (Int, JSONValue) {
        guard let mpinId = Hex.decode(mpinIdHex) else { return (400, .null) }
        let refusal: (Int, JSONValue)? = state.withLock { s in
            guard s.blocked.contains(mpinIdHex) else { return nil }
            guard s.signsVerdicts, let nonce,
                  let signature = try? Verdict.sign(nonce: nonce, mpinID: mpinId, userID: MPinIdentity.parse(mpinId)?.userID ?? "",
                                                    status: 410, context: Verdict.revokedContext, secretKey: s.verdictSecretKey)
            else { return (410, .null) }
            return (410, .object([("verdictSignature", .string(signature))]))
        }
        if let refusal { return refusal }
        let hashed = MPin.hashID(mpinId), date = today
        guard let permit = try? MPin.timePermit(date: date, masterSecret: share1, hashedID: hashed) else { return (500, .null) }
        return (200, .object([("timePermit", .string(Hex.encode(permit))), ("date", .number(String(date))),
                              ("storageId", .string(Hex.encode(hashed))), ("signature", .string("unchecked"))]))
    }

    private func dtaTimePermit(_ parameters: [(String, String)]) -> (Int, JSONValue) {
        guard let hashed = parameters.first(where: { $0.0 == "hash_mpin_id" }).flatMap({ Hex.decode($0.1, length: 32) }),
              let permit = try? MPin.timePermit(date: today, masterSecret: share2, hashedID: hashed) else { return (400, .null) }
        return (200, .object([("timePermit", .string(Hex.encode(permit)))]))
    }

    private func pass1(_ body: JSONValue) -> (Int, JSONValue) {
        guard let id = body["mpin_id"]?.stringValue, let u = Hex.decode(body["U"]?.stringValue ?? ""),
              let ut = Hex.decode(body["UT"]?.stringValue ?? ""), let y = try? SystemRandom.scalar() else { return (400, .null) }
        state.withLock { $0.pass1[id.lowercased()] = Pass1(u: u, ut: ut, y: y) }
        return (200, .object([("y", .string(Hex.encode(y))), ("pass", .number("1"))]))
    }

    private func pass2(_ body: JSONValue) -> (Int, JSONValue) {
        guard let id = body["mpin_id"]?.stringValue?.lowercased(), let v = Hex.decode(body["V"]?.stringValue ?? ""),
              let first = state.withLock({ $0.pass1.removeValue(forKey: id) }), let mpinId = Hex.decode(id),
              let ott = try? SystemRandom.bytes(16) else { return (400, .null) }
        let ok = verify(mpinId: mpinId, first, v: v)
        // As mpin-server: a client's verdict nonce travels inside the authOTT (PROTOCOL.md §4.5.1).
        let authOTT = Verdict.oneTimeToken(random: ott, nonce: Verdict.nonce(fromHex: body["verdictNonce"]?.stringValue))
        state.withLock { $0.verdicts[authOTT] = (id, ok) }
        return (200, .object([("version", .string("0.3")), ("authOTT", .string(authOTT)), ("pass", .number("2"))]))
    }

    /// V + s1·P + s2·P = O with P = UT + y·HTID: the pass-2 check with the master-secret shares.
    private func verify(mpinId: [UInt8], _ first: Pass1, v: [UInt8]) -> Bool {
        do {
            guard let htid = try MPin.server1(date: today, mpinID: mpinId).htid, let y = UInt256(bigEndian: first.y),
                  let s1 = UInt256(bigEndian: share1), let s2 = UInt256(bigEndian: share2) else { return false }
            let p = try G1Point(bytes: first.ut) + (try G1Point(bytes: htid)).multiplied(by: y)
            return (p.multiplied(by: s1) + p.multiplied(by: s2) + (try G1Point(bytes: v))).isInfinity
        } catch {
            return false
        }
    }

    private func authenticate(_ body: JSONValue) -> (Int, JSONValue) {
        guard let ott = body["mpinResponse"]?["authOTT"]?.stringValue,
              let verdict = state.withLock({ $0.verdicts[ott] }) else { return (401, .null) }
        let nonce = Verdict.nonce(inOneTimeToken: ott)
        return state.withLock { s in
            let mpinID = Hex.decode(verdict.mpinIdHex) ?? []
            let userID = MPinIdentity.parse(mpinID)?.userID ?? ""
            // As mpin-server: the verdict signed over the client's nonce (PROTOCOL.md §4.5.1).
            func signed(_ status: Int, _ members: [(key: String, value: JSONValue)]) -> (Int, JSONValue) {
                guard s.signsVerdicts, let nonce,
                      let signature = try? Verdict.sign(nonce: nonce, mpinID: mpinID, userID: userID, status: status,
                                                        context: Verdict.tokenContext, secretKey: s.verdictSecretKey)
                else { return (status, .object(members)) }
                return (status, .object(members + [(key: "verdictSignature", value: .string(signature))]))
            }
            if verdict.ok {
                s.wrongPINs[verdict.mpinIdHex] = 0
                return signed(200, [(key: "userId", value: .string(userID))])
            }
            s.wrongPINs[verdict.mpinIdHex, default: 0] += 1
            guard s.wrongPINs[verdict.mpinIdHex]! >= Self.maxAttempts else { return signed(401, []) }
            s.blocked.insert(verdict.mpinIdHex)
            return signed(410, [])
        }
    }

    private static func sleep(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0, errno == EINTR { request = remaining }
    }
}
