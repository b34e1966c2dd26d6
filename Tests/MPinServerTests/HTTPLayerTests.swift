import Foundation
import GRDB
import Hummingbird
import Logging
import MPinWire
import XCTest

import MPinServer  // SQLiteStorage, PurgeService(storage:)

/// The HTTP layer: the error table, query and body reading, routing (404, 405, OPTIONS, 413),
/// the request log and the purge service.
final class HTTPLayerTests: XCTestCase {
    func testErrorTableKeepsTheOriginalStatusesAndMessages() {
        let expected: [(ServerError, Int, String)] = [
            (.badRequest("BAD REQUEST. INVALID USERID"), 400, "BAD REQUEST. INVALID USERID"),
            (.invalidJSON(detail: ": userId argument missing"), 400, "BAD REQUEST. INVALID JSON: userId argument missing"),
            (.invalidPassBody(detail: ""), 403, "BAD REQUEST. Invalid data received"),
            (.invalidData("U is not a G1 point"), 403, "Invalid data received. U is not a G1 point"),
            (.invalidArgument("Invalid expires"), 403, "Invalid expires"),
            (.invalidSignature, 401, "Invalid signature"),
            (.wrongPIN, 401, "Wrong PIN."),
            (.blocked, 410, "Wrong PIN."),
            (.notActivated, 401, "M-PinID not active."),
            (.unauthorized("Not authenticated yet"), 401, "Not authenticated yet"),
            (.revoked, 403, "Identity not authorized"),
            (.noPass1State, 403, "Invalid pass one data"),
            (.expired("Request expired"), 408, "Request expired"),
            (.timePermitRefused, 410, "Time permit refused"),
            (.accessNumberInvalid, 412, "Invalid or expired access number"),
            (.notFound, 404, "URI NOT FOUND"),
            (.methodNotAllowed, 405, "Method not allowed"),
            (.bodyTooLarge, 413, "Request body too large"),
            (.internal("Generation failed"), 500, "Generation failed"),
            (.dtaFailure("D-TA unreachable"), 502, "D-TA unreachable"),
            (.unavailable("Storage unavailable"), 503, "Storage unavailable"),
        ]
        for (error, status, message) in expected {
            XCTAssertEqual(error.statusCode, status, "\(error)")
            XCTAssertEqual(error.message, message, "\(error)")
            let response = error.jsonResponse()
            XCTAssertEqual(response.status.code, status)
            XCTAssertEqual(response.headers[.wwwAuthenticate], status == 401 ? "Authenticate" : nil, "\(error)")
            XCTAssertEqual(response.headers[.contentType], "application/json; charset=UTF-8")
        }
        // Anything that is not the server's own error reveals nothing.
        struct Unexpected: Error {}
        XCTAssertEqual(ServerError(answering: Unexpected()), .internal("Internal error"))
        XCTAssertEqual(ServerError(answering: HTTPError(.notFound)), .notFound)
    }

    func testQueryParametersTakeTheLastValueAndRefuseBadEscapes() throws {
        let q = try XCTUnwrap(QueryParameters("a=1&regOTT=00&a=2&b=x%2By+z"))
        XCTAssertEqual(q["a"], "2")
        XCTAssertEqual(q["b"], "x+y z")
        XCTAssertNil(q["c"])
        XCTAssertNil(QueryParameters("a=%zz"))
        XCTAssertNil(try XCTUnwrap(QueryParameters(nil))["a"])
    }

    func testDecodingErrorsNameTheFieldNeverTheValue() async throws {
        let decoder = WireBodyDecoder(maxBodyBytes: 1024)
        func refusal(_ body: String, _ kind: WireBodyDecoder.Refusal = .invalidJSON) async -> ServerError? {
            let request = Request(head: .init(method: .put, scheme: nil, authority: nil, path: "/"),
                                  body: .init(buffer: ByteBuffer(string: body)))
            do { _ = try await decoder.decode(RegisterRequest.self, from: request, refusal: kind); return nil } catch {
                return error as? ServerError
            }
        }
        let missing = await refusal(#"{"mobile":1}"#)
        XCTAssertEqual(missing, .invalidJSON(detail: ": userId argument missing"))
        let wrongType = await refusal(#"{"userId":"secret-but-wrong","mobile":"one"}"#)
        XCTAssertEqual(wrongType, .invalidJSON(detail: ": wrong type for mobile"))
        let notJSON = await refusal("{", .invalidPassBody)
        XCTAssertEqual(notJSON, .invalidPassBody(detail: ""))
        let topLevel = await refusal("[]")
        XCTAssertEqual(topLevel, .invalidJSON(detail: ""))
        let fine = await refusal(#"{"userId":"a","mobile":1}"#)
        XCTAssertNil(fine)
    }

    func testRoutingErrorsCORSAndBodyLimit() async throws {
        let server = try TestServer { $0.maxBodyBytes = 2048 }
        try await server.start()
        do {
            let http = server.client!
            let cases: [(String, String, String?, Int, String)] = [
                ("GET", "/rps/pass1", nil, 405, "Method not allowed"),
                ("PUT", "/mpinAuthenticate", "{}", 405, "Method not allowed"),
                ("POST", "/rps/pass2", #"{"pass":2,"V":"04"}"#, 403, "BAD REQUEST. Invalid data received: WID argument missing"),
                ("POST", "/rps/pass2", String(repeating: " ", count: 3000), 413, "Request body too large"),
                ("POST", "/mpinAuthenticate", #"{"mpinResponse":{}}"#, 400, "BAD REQUEST. authOTT argument missing"),
                ("POST", "/mpinAuthenticate", #"{"mpinResponse":{"authOTT":"00ff"}}"#, 408, "Expired authentication request"),
                ("DELETE", "/rps/user", nil, 405, "Method not allowed"),
                ("GET", "/no/such/path", nil, 404, "URI NOT FOUND"),
                ("GET", "/rps/signature", nil, 404, "URI NOT FOUND"),
                ("PUT", "/rps/user/ab/cd", "{}", 404, "URI NOT FOUND"),
                ("PUT", "/rps/user", #"{"mobile":1}"#, 400, "BAD REQUEST. INVALID JSON: userId argument missing"),
                ("POST", "/rps/pass1", "{", 403, "BAD REQUEST. Invalid data received"),
                ("PUT", "/rps/user", String(repeating: " ", count: 3000), 413, "Request body too large"),
                ("POST", "/no/such/path", String(repeating: " ", count: 3000), 413, "Request body too large"),
                ("GET", "/dta/timePermit?signature=00", nil, 403, "Missing argument"),
                ("POST", "/rps/accessnumber", #"{"webOTT":"00"}"#, 401, "Not authenticated yet"),
            ]
            for (method, path, body, status, message) in cases {
                let r = try await http.send(method, path, body: body.map { Data($0.utf8) })
                XCTAssertEqual(r.status, status, "\(method) \(path)")
                XCTAssertEqual(r.object?["message"]?.string, message, "\(method) \(path)")
                XCTAssertEqual(r.headers["access-control-allow-origin"], "*", "\(method) \(path)")
                XCTAssertEqual(r.headers["access-control-allow-methods"], "GET,PUT,POST,DELETE,OPTIONS")
                XCTAssertEqual(r.headers["www-authenticate"], status == 401 ? "Authenticate" : nil, "\(method) \(path)")
            }
            let preflight = try await http.send("OPTIONS", "/rps/pass1")
            XCTAssertEqual(preflight.status, 200)
            XCTAssertEqual(String(decoding: preflight.body, as: UTF8.self), #"{"version":"0.3","message":"options request"}"#)
            let options = try await http.send("OPTIONS", "/anything/at/all")
            XCTAssertEqual(options.status, 200)
            XCTAssertEqual(String(decoding: options.body, as: UTF8.self), #"{"version":"0.3","message":"options request"}"#)
            // Any origin, and so never with credentials (docs/SECURITY.md §5).
            XCTAssertEqual(options.headers["access-control-allow-origin"], "*")
            XCTAssertNil(options.headers["access-control-allow-credentials"])
            let permit = try await http.get("/rps/timePermit/00")
            XCTAssertEqual(permit.status, 410)
            XCTAssertNil(permit.headers["cache-control"], "only a 200 time permit says no-cache")
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    /// The login requests, answered through their own lean middleware (`LoginRoutes`), carry the
    /// headers every other answer carries, in the same order: a refusal like any other refusal,
    /// a verdict like any other 200, a 405 like any other 405.
    func testLoginAnswersHaveTheHeadersOfEveryOtherAnswer() async throws {
        let server = try TestServer()
        try await server.start()
        do {
            let base = "http://127.0.0.1:\(server.running!.port)"
            /// Header names in order, with the values of the CORS ones (the others vary: date, length).
            func shape(_ head: [String]) -> [String] {
                head.dropFirst().map { line in
                    let name = String(line.prefix { $0 != ":" }).lowercased()
                    return name.hasPrefix("access-control-") ? line.lowercased() : name
                }
            }
            let refusal = try RawHTTP.head(base, "PUT", "/rps/user", body: Data(#"{"mobile":1}"#.utf8))
            XCTAssertTrue(refusal[0].contains(" 400 "), refusal[0])
            XCTAssertEqual(shape(refusal).prefix(4), ["access-control-allow-origin: *",
                                                     "access-control-allow-methods: get,put,post,delete,options",
                                                     "access-control-allow-headers: content-type, depth, user-agent, x-file-size, "
                                                     + "x-requested-with, x-requested-by, if-modified-since, x-file-name, "
                                                     + "cache-control, www-authenticate", "content-type"])
            for (path, body, status) in [("/rps/pass1", "{", 403), ("/rps/pass2", "{}", 403),
                                         ("/mpinAuthenticate", #"{"mpinResponse":{"authOTT":"00ff"}}"#, 408)] {
                let head = try RawHTTP.head(base, "POST", path, body: Data(body.utf8))
                XCTAssertTrue(head[0].contains(" \(status) "), "\(path): \(head[0])")
                XCTAssertEqual(shape(head), shape(refusal), path)
            }
            let wrongMethod = try RawHTTP.head(base, "GET", "/rps/pass1")
            let otherWrongMethod = try RawHTTP.head(base, "GET", "/rps/getAccessNumber")
            XCTAssertTrue(wrongMethod[0].contains(" 405 "), wrongMethod[0])
            XCTAssertEqual(shape(wrongMethod), shape(otherWrongMethod))
            var client = MPinTestClient(http: server.client)
            try await client.registerFully("lena", pin: "1234")
            let (pass2, _) = try await client.passes(pin: "1234")
            let body = try JSONEncoder().encode(AuthenticateRequest(mpinResponse: MPinResponse(pass2)))
            let verdict = try RawHTTP.head(base, "POST", "/mpinAuthenticate", body: body)
            let settings = try RawHTTP.head(base, "GET", "/rps/clientSettings")
            XCTAssertTrue(verdict[0].contains(" 200 "), verdict[0])
            XCTAssertEqual(shape(verdict), shape(settings))
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    /// Responses are written with their keys in declaration order, which is the order the
    /// original servers wrote (Foundation's encoder on Linux used a different order each time).
    func testResponseKeysKeepTheRecordedOrder() async throws {
        let server = try TestServer()
        try await server.start()
        do {
            let ours = try await server.client.get("/rps/clientSettings")
            let text = String(decoding: ours.body, as: UTF8.self)
            let keys = ["requestOTP", "mpinAuthServerURL", "timePermitsURL", "useWebSocket", "useNFC", "setDeviceName",
                        "seedValue", "accessNumberDigits", "accessNumberURL", "setupDoneURL", "timePermitsStorageURL",
                        "authenticateURL", "certivoxURL", "accessNumberUseCheckSum", "registerURL", "appID", "cSum",
                        "signatureURL", "getAccessNumberURL", "mobileAuthenticateURL"]
            let positions = keys.map { text.range(of: "\"\($0)\":")?.lowerBound }
            XCTAssertFalse(positions.contains(nil), text)
            XCTAssertEqual(positions.compactMap { $0 }, positions.compactMap { $0 }.sorted(), text)
            XCTAssertTrue(text.hasPrefix(#"{"requestOTP":false,"mpinAuthServerURL":"/rps","#), text)
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    func testRequestLogNamesTheRouteNeverThePathOrQuery() async throws {
        let base = try TestServer()
        let lines = LogLines()
        var logger = Logger(label: "mpin-server-test") { _ in CapturingLogHandler(lines: lines) }
        logger.logLevel = .info
        let running = try await MPinServer(dataDirectory: base.dataDir, port: 0, logger: logger).start()
        do {
            let http = HTTPClient(base: "http://127.0.0.1:\(running.port)")
            var client = MPinTestClient(http: http)
            let registration = try await client.register("olga")
            let signature = try await http.get("/rps/signature/\(registration.mpinId)?regOTT=\(registration.regOTT)")
            XCTAssertEqual(signature.status, 200)
            _ = try await http.get("/no/such/path?regOTT=\(registration.regOTT)")
            _ = try await http.send("POST", "/rps/pass1", body: Data("{".utf8))
            await running.stop()
            let requests = lines.all.filter { $0.message == "request" }
            XCTAssertEqual(requests.count, 4)
            let routes = requests.map { $0.metadata["route"] ?? "" }
            XCTAssertTrue(routes[1].contains("signature") && !routes[1].contains(registration.mpinId), routes[1])
            // A login request, answered through its own middleware, logs its line as the others do.
            XCTAssertEqual(routes[3], "/rps/pass1")
            XCTAssertEqual(requests.map { $0.metadata["status"] }, ["200", "200", "404", "403"])
            XCTAssertEqual(requests.map { $0.metadata["method"] }, ["PUT", "GET", "GET", "POST"])
            for line in lines.all {
                let text = line.message + line.metadata.values.joined(separator: " ")
                XCTAssertFalse(text.contains(registration.regOTT), "regOTT logged: \(text)")
                XCTAssertFalse(text.contains(registration.mpinId), "mpinId logged: \(text)")
            }
        } catch { await running.stop(); await base.shutdown(); throw error }
        await base.shutdown()
    }

    func testPurgeServiceDeletesExpiredRecordsUntilCancelled() async throws {
        let path = NSTemporaryDirectory() + "mpin-purge-" + UUID().uuidString + ".db"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let storage = try SQLiteStorage(path: path)
        let now = Date()
        for (id, expires) in [("aa", now.addingTimeInterval(-5)), ("bb", now.addingTimeInterval(3600))] {
            try await storage.pool.write { db in
                try db.execute(sql: """
                    INSERT INTO registrations (mpin_id, user_id, reg_ott_hash, activate_key_hash, active, expires)
                    VALUES (?, ?, 'h', 'k', 1, ?)
                    """, arguments: [id, "u" + id, expires.timeIntervalSince1970])
            }
        }
        func count() throws -> Int { try storage.pool.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM registrations") ?? -1 } }
        XCTAssertEqual(try count(), 2)
        let service = PurgeService(storage: storage, interval: .milliseconds(20), logger: Logger(label: "t"))
        let task = Task { try await service.run() }
        for _ in 0..<100 where try count() != 1 { try await Task.sleep(for: .milliseconds(20)) }
        XCTAssertEqual(try count(), 1, "the expired registration is purged, the live one kept")
        task.cancel()
        try await task.value  // returns once cancelled
    }
}

/// Log lines captured by `CapturingLogHandler`.
final class LogLines: @unchecked Sendable {
    struct Line { var message: String; var metadata: [String: String] }
    private let lock = NSLock()
    private var lines: [Line] = []
    func append(_ line: Line) { lock.lock(); lines.append(line); lock.unlock() }
    var all: [Line] { lock.lock(); defer { lock.unlock() }; return lines }
}

struct CapturingLogHandler: LogHandler {
    let lines: LogLines
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(level: Logger.Level, message: Logger.Message, metadata extra: Logger.Metadata?,
             source: String, file: String, function: String, line: UInt) {
        var all = metadata
        for (k, v) in extra ?? [:] { all[k] = v }
        lines.append(.init(message: "\(message)", metadata: all.mapValues { "\($0)" }))
    }
}
