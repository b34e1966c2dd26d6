import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import MPinCrypto
import MPinServer
import MPinPostgresTestSupport
import MPinWire
import XCTest

/// An HTTP response as the tests see it.
struct HTTPResult: Sendable {
    let status: Int
    let body: Data
    let headers: [String: String]

    /// The body as a JSON object, or nil.
    var object: [String: JSONValue]? {
        if case .object(let o)? = try? JSONDecoder().decode(JSONValue.self, from: body) { return o }
        return nil
    }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try JSONDecoder().decode(T.self, from: body) }
}

/// A JSON value that keeps booleans and numbers apart (for key/type comparisons).
enum JSONValue: Decodable, Equatable, Sendable {
    case string(String), number(Double), bool(Bool), object([String: JSONValue]), array([JSONValue]), null

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let n = try? c.decode(Double.self) { self = .number(n) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([JSONValue].self) { self = .array(a) }
        else { self = .object(try c.decode([String: JSONValue].self)) }
    }

    /// The type name, recursing into objects: the shape two bodies must share.
    var shape: String {
        switch self {
        case .string: return "string"
        case .number: return "number"
        case .bool: return "bool"
        case .null: return "null"
        case .array: return "array"
        case .object(let o): return "{" + o.keys.sorted().map { "\($0):\(o[$0]!.shape)" }.joined(separator: ",") + "}"
        }
    }

    var string: String? { if case .string(let s) = self { return s }; return nil }
}

/// A tiny HTTP client over URLSession.
final class HTTPClient: Sendable {
    let base: String
    private let session: URLSession

    /// `timeout`: seconds a request may take.
    init(base: String, timeout: Double = 60) {
        self.base = base
        let config = URLSessionConfiguration.ephemeral
        config.timeoutIntervalForRequest = timeout
        config.httpMaximumConnectionsPerHost = 64
        session = URLSession(configuration: config)
    }

    func send(_ method: String, _ path: String, body: Data? = nil, headers extra: [String: String] = [:]) async throws -> HTTPResult {
        var request = URLRequest(url: URL(string: base + path)!)
        request.httpMethod = method
        if let body {
            request.httpBody = body
            request.setValue("application/json; charset=UTF-8", forHTTPHeaderField: "Content-Type")
        }
        for (name, value) in extra { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await session.data(for: request)
        let http = response as! HTTPURLResponse
        var headers: [String: String] = [:]
        for (k, v) in http.allHeaderFields { headers["\(k)".lowercased()] = "\(v)" }
        return HTTPResult(status: http.statusCode, body: data, headers: headers)
    }

    func get(_ path: String) async throws -> HTTPResult { try await send("GET", path) }
    func post(_ path: String, _ value: some Encodable) async throws -> HTTPResult {
        try await send("POST", path, body: try JSONEncoder().encode(value))
    }
    func put(_ path: String, _ value: some Encodable) async throws -> HTTPResult {
        try await send("PUT", path, body: try JSONEncoder().encode(value))
    }
}

/// A server on 127.0.0.1 with a fresh data directory; always stopped by `shutdown()`. Its
/// database is `DIR/mpin.sqlite`, or with `storage: .postgres` a fresh PostgreSQL database
/// (created under MPIN_TEST_POSTGRES, dropped by `shutdown()`).
final class TestServer: @unchecked Sendable {
    let dataDir: String
    let storage: TestStorage
    /// The PostgreSQL database's name, nil for SQLite.
    private(set) var postgresDatabase: String?
    private(set) var running: RunningServer?
    private(set) var client: HTTPClient!
    /// The database the administrator's helpers use, opened on first use.
    private var adminDatabase: ServerDatabase?

    init(autoActivate: Bool = true, adjust: (inout ServerConfig) -> Void = { _ in }) throws {
        dataDir = NSTemporaryDirectory() + "mpin-test-" + UUID().uuidString
        storage = .sqlite
        try DataDirectory.initialise(path: dataDir, autoActivate: autoActivate, adjust: adjust)
    }

    /// A server on `storage`; `.postgres` needs MPIN_TEST_POSTGRES (tests skip before this).
    init(autoActivate: Bool = true, storage: TestStorage, adjust: (inout ServerConfig) -> Void = { _ in }) async throws {
        dataDir = NSTemporaryDirectory() + "mpin-test-" + UUID().uuidString
        self.storage = storage
        var database: String? = nil
        if storage == .postgres {
            let (name, url) = try await TestPostgres.createDatabase()
            postgresDatabase = name
            database = url
        }
        try DataDirectory.initialise(path: dataDir, autoActivate: autoActivate) { config in
            config.database = database
            adjust(&config)
        }
    }

    static var quietLogger: Logger {
        var logger = Logger(label: "mpin-server-test")
        logger.logLevel = .critical  // task cancellation at stop() logs an expected error
        return logger
    }

    func start() async throws {
        let server = try await MPinServer(dataDirectory: dataDir, host: "127.0.0.1", port: 0, logger: Self.quietLogger)
        let r = try await server.start()
        running = r
        client = HTTPClient(base: "http://127.0.0.1:\(r.port)")
    }

    func stop() async {
        await running?.stop()
        running = nil
    }

    func shutdown() async {
        await stop()
        await adminDatabase?.close()
        adminDatabase = nil
        if let postgresDatabase { try? await TestPostgres.dropDatabase(postgresDatabase) }
        try? FileManager.default.removeItem(atPath: dataDir)
    }

    private func database() async throws -> ServerDatabase {
        if let adminDatabase { return adminDatabase }
        var logger = Self.quietLogger
        logger.logLevel = .critical
        let d = try await DataDirectory(path: dataDir).openDatabase(logger: logger)
        adminDatabase = d
        return d
    }

    /// `mpin-server user …` on this server's database.
    func admin() async throws -> Admin {
        Admin(database: try await database(), config: try DataDirectory(path: dataDir).loadConfig())
    }

    /// `mpin-server app …` on this server's database.
    func appAdmin() async throws -> AppAdmin { AppAdmin(database: try await database()) }

    /// The user as `user list` shows it, nil when there is none.
    func user(_ id: String) async throws -> UserSummary? {
        try await admin().list().first { $0.userId == id }
    }
}

/// A client that speaks the protocol with MPinCrypto, as the SDK does.
struct MPinTestClient {
    let http: HTTPClient
    var mpinIDHex = ""
    var regOTT = ""
    var token: [UInt8] = []

    init(http: HTTPClient) { self.http = http }

    var mpinID: [UInt8] { Hex.decode(mpinIDHex)! }

    static func pinValue(_ pin: String) -> Int32 { MPin.sdkPINValue(Array(pin.utf8)) }

    mutating func register(_ userID: String, activateCode: String? = nil) async throws -> RegisterResponse {
        let r = try await http.put("/rps/user", RegisterRequest(userId: userID, mobile: 1, activateCode: activateCode))
        XCTAssertEqual(r.status, 200, String(decoding: r.body, as: UTF8.self))
        let reg = try r.decode(RegisterResponse.self)
        mpinIDHex = reg.mpinId
        regOTT = reg.regOTT
        return reg
    }

    /// ConfirmRegistration + FinishRegistration: both shares, then the token for `pin`.
    mutating func confirmAndFinish(pin: String) async throws {
        let s = try await http.get("/rps/signature/\(mpinIDHex)?regOTT=\(regOTT)")
        XCTAssertEqual(s.status, 200, String(decoding: s.body, as: UTF8.self))
        let sig = try s.decode(SignatureResponse.self)
        let c = try await http.get("/dta/clientSecret?" + sig.params)
        XCTAssertEqual(c.status, 200, String(decoding: c.body, as: UTF8.self))
        let share2 = try c.decode(ClientSecretResponse.self)
        let cs = try MPin.recombineG1(Hex.decode(sig.clientSecretShare)!, Hex.decode(share2.clientSecret)!)
        token = try MPin.extractPIN(mpinID: mpinID, pin: Self.pinValue(pin), clientSecret: cs)
    }

    mutating func registerFully(_ userID: String, pin: String) async throws {
        _ = try await register(userID)
        try await confirmAndFinish(pin: pin)
    }

    /// StartAuthentication: both time-permit shares. Returns (date, permit) or the failing status.
    func timePermit() async throws -> (date: Int32, permit: [UInt8])? {
        let t = try await http.get("/rps/timePermit/\(mpinIDHex)")
        guard t.status == 200 else { return nil }
        let rps = try t.decode(TimePermitResponse.self)
        let settings = try await http.get("/rps/clientSettings").decode(ClientSettings.self)
        let d = try await http.get("/dta/timePermit?hash_mpin_id=\(rps.storageId)&app_id=\(settings.appID)&mobile=1&signature=\(rps.signature)")
        XCTAssertEqual(d.status, 200)
        let share2 = try d.decode(DTATimePermitResponse.self)
        return (Int32(rps.date), try MPin.recombineG1(Hex.decode(rps.timePermit)!, Hex.decode(share2.timePermit)!))
    }

    /// Pass 1 and pass 2; returns the pass-2 response and the raw pass-2 request body.
    /// `echo`: send the pass-1 answer's `pass1Id` back in pass 2, as mpin-server's own clients do
    /// (the original SDK, which this helper plays by default, sends none).
    /// `verdictNonce`: sent with pass 2, as a host with a pinned verdict key does (§4.5.1).
    func passes(pin: String, wid: String = "0", otp: Bool = false,
                permit: (date: Int32, permit: [UInt8])? = nil, echo: Bool = false,
                verdictNonce: [UInt8]? = nil) async throws -> (Pass2Response, Data) {
        let tp: (date: Int32, permit: [UInt8])
        if let permit { tp = permit } else { tp = try await timePermit()! }
        let x = try SystemRandom.scalar()
        let c1 = try MPin.client1(date: tp.date, mpinID: mpinID, x: x, pin: Self.pinValue(pin), token: token,
                                  timePermit: tp.permit)
        let p1 = try await http.post("/rps/pass1", Pass1Request(mpinId: mpinIDHex, ut: Hex.encode(c1.ut!), u: Hex.encode(c1.u)))
        XCTAssertEqual(p1.status, 200)
        let answer = try p1.decode(Pass1Response.self)
        let y = Hex.decode(answer.y)!
        let v = try MPin.client2(x: x, y: y, sec: c1.sec)
        let body = try JSONEncoder().encode(Pass2Request(mpinId: mpinIDHex, v: Hex.encode(v), wid: wid, otp: otp,
                                                         pass1Id: echo ? answer.pass1Id : nil,
                                                         verdictNonce: verdictNonce.map(Hex.encode)))
        let p2 = try await http.send("POST", "/rps/pass2", body: body)
        XCTAssertEqual(p2.status, 200, String(decoding: p2.body, as: UTF8.self))
        return (try p2.decode(Pass2Response.self), body)
    }

    /// The final step at the RPA; returns the HTTP status.
    func finalStep(_ pass2: Pass2Response) async throws -> Int {
        try await http.post("/mpinAuthenticate", AuthenticateRequest(mpinResponse: MPinResponse(pass2))).status
    }

    /// A whole authentication; returns the final status.
    func authenticate(pin: String, echo: Bool = false) async throws -> Int {
        let (p2, _) = try await passes(pin: pin, echo: echo)
        return try await finalStep(p2)
    }
}

extension MPinTestClient {
    /// The same registered client talking to another server instance.
    func using(_ http: HTTPClient) -> MPinTestClient {
        var c = MPinTestClient(http: http)
        c.mpinIDHex = mpinIDHex; c.regOTT = regOTT; c.token = token
        return c
    }
}
