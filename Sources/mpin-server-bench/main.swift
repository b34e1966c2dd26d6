// `make bench` (server part): full authentications (pass 1 + pass 2 + authenticate) per second
// against an in-process release server on 127.0.0.1 with several concurrent clients, and the
// latency of one authentication. Prints `NAME VALUE` lines.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import MPinCrypto
import MPinServer
import MPinWire

let clients = Int(ProcessInfo.processInfo.environment["BENCH_CLIENTS"] ?? "") ?? 8
let seconds = Double(ProcessInfo.processInfo.environment["BENCH_SECONDS"] ?? "") ?? 5

struct BenchError: Error { let what: String }

final class Client: Sendable {
    let session: URLSession
    let base: String
    init(base: String) {
        let c = URLSessionConfiguration.ephemeral
        c.httpMaximumConnectionsPerHost = 64
        session = URLSession(configuration: c)
        self.base = base
    }
    func send(_ method: String, _ path: String, _ body: (some Encodable)?) async throws -> (Int, Data) {
        var r = URLRequest(url: URL(string: base + path)!)
        r.httpMethod = method
        if let body { r.httpBody = try JSONEncoder().encode(body) }
        let (data, response) = try await session.data(for: r)
        return ((response as! HTTPURLResponse).statusCode, data)
    }
    func get<T: Decodable>(_ path: String, as: T.Type) async throws -> T {
        let (s, d) = try await send("GET", path, Optional<String>.none)
        guard s == 200 else { throw BenchError(what: "GET \(path) → \(s)") }
        return try JSONDecoder().decode(T.self, from: d)
    }
    func post<T: Decodable>(_ path: String, _ body: some Encodable, as: T.Type) async throws -> T {
        let (s, d) = try await send("POST", path, body)
        guard s == 200 else { throw BenchError(what: "POST \(path) → \(s)") }
        return try JSONDecoder().decode(T.self, from: d)
    }
}

struct Identity: Sendable {
    let mpinIDHex: String
    let token: [UInt8]
    let date: Int32
    let permit: [UInt8]
}

let pin = MPin.sdkPINValue(Array("1234".utf8))

func register(_ c: Client, _ user: String) async throws -> Identity {
    let (s, d) = try await c.send("PUT", "/rps/user", RegisterRequest(userId: user))
    guard s == 200 else { throw BenchError(what: "register → \(s)") }
    let reg = try JSONDecoder().decode(RegisterResponse.self, from: d)
    let sig = try await c.get("/rps/signature/\(reg.mpinId)?regOTT=\(reg.regOTT)", as: SignatureResponse.self)
    let cs2 = try await c.get("/dta/clientSecret?" + sig.params, as: ClientSecretResponse.self)
    let mpinID = Hex.decode(reg.mpinId)!
    let cs = try MPin.recombineG1(Hex.decode(sig.clientSecretShare)!, Hex.decode(cs2.clientSecret)!)
    let token = try MPin.extractPIN(mpinID: mpinID, pin: pin, clientSecret: cs)
    let tp1 = try await c.get("/rps/timePermit/\(reg.mpinId)", as: TimePermitResponse.self)
    let settings = try await c.get("/rps/clientSettings", as: ClientSettings.self)
    let tp2 = try await c.get("/dta/timePermit?hash_mpin_id=\(tp1.storageId)&app_id=\(settings.appID)&mobile=1&signature=\(tp1.signature)",
                              as: DTATimePermitResponse.self)
    let permit = try MPin.recombineG1(Hex.decode(tp1.timePermit)!, Hex.decode(tp2.timePermit)!)
    return Identity(mpinIDHex: reg.mpinId, token: token, date: Int32(tp1.date), permit: permit)
}

func authenticate(_ c: Client, _ id: Identity) async throws {
    let mpinID = Hex.decode(id.mpinIDHex)!
    let x = try SystemRandom.scalar()
    let c1 = try MPin.client1(date: id.date, mpinID: mpinID, x: x, pin: pin, token: id.token, timePermit: id.permit)
    let p1 = try await c.post("/rps/pass1", Pass1Request(mpinId: id.mpinIDHex, ut: Hex.encode(c1.ut!), u: Hex.encode(c1.u)),
                              as: Pass1Response.self)
    let v = try MPin.client2(x: x, y: Hex.decode(p1.y)!, sec: c1.sec)
    let p2 = try await c.post("/rps/pass2", Pass2Request(mpinId: id.mpinIDHex, v: Hex.encode(v)), as: Pass2Response.self)
    let (status, _) = try await c.send("POST", "/mpinAuthenticate", AuthenticateRequest(mpinResponse: MPinResponse(p2)))
    guard status == 200 else { throw BenchError(what: "authenticate → \(status)") }
}

func percentile(_ sorted: [Double], _ p: Double) -> Double {
    sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
}

let dir = NSTemporaryDirectory() + "mpin-bench-" + UUID().uuidString
defer { try? FileManager.default.removeItem(atPath: dir) }
try DataDirectory.initialise(path: dir, autoActivate: true)
var logger = Logger(label: "mpin-server-bench")
logger.logLevel = .critical
let server = try await MPinServer(dataDirectory: dir, host: "127.0.0.1", port: 0, logger: logger)
let running = try await server.start()
let client = Client(base: "http://127.0.0.1:\(running.port)")

var identities: [Identity] = []
for i in 0..<clients { identities.append(try await register(client, "bench\(i)")) }
for id in identities { try await authenticate(client, id) }  // warm-up

// Latency of one authentication with no other load.
var solo: [Double] = []
for i in 0..<20 {
    let t0 = DispatchTime.now().uptimeNanoseconds
    try await authenticate(client, identities[i % identities.count])
    solo.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6)
}

let start = DispatchTime.now().uptimeNanoseconds
let deadline = start + UInt64(seconds * 1e9)
let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
    for id in identities {
        group.addTask {
            var l: [Double] = []
            while DispatchTime.now().uptimeNanoseconds < deadline {
                let t0 = DispatchTime.now().uptimeNanoseconds
                try await authenticate(client, id)
                l.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6)
            }
            return l
        }
    }
    var all: [Double] = []
    for try await l in group { all += l }
    return all.sorted()
}
let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
await running.stop()

solo.sort()
print("server_auth_rate \(Int((Double(latencies.count) / elapsed).rounded()))")
print("server_auth_p50_ms \(String(format: "%.1f", percentile(latencies, 0.5)))")
print("server_auth_p99_ms \(String(format: "%.1f", percentile(latencies, 0.99)))")
print("server_auth_single_ms \(String(format: "%.1f", percentile(solo, 0.5)))")
