import Foundation
import GRDB
import Logging
import MPinCrypto
import MPinServer
import MPinPostgresTestSupport
import MPinWire
import XCTest
#if canImport(Glibc)
import Glibc
#endif

// The storage contract on PostgreSQL: the server-level tests of EndToEndTests, RobustnessTests,
// DeviceLoginTests, OIDCFlowTests and ConcurrentLoginTests run again, every one of them, on a
// fresh PostgreSQL database each: the classes below only set the backend (`storage`), and
// XCTest runs every test a class inherits, so a new test runs on both backends without a line
// here. Plus the schema-version refusal and several `mpin-server serve` nodes on one database.
// They need MPIN_TEST_POSTGRES=postgresql://USER@HOST:PORT/DB (a role that may create
// databases; `make test-postgres` starts a throwaway cluster and sets it); without it every one
// of them is reported as skipped, by name.

/// Which database a test server uses.
enum TestStorage: Sendable, Equatable {
    case sqlite
    case postgres

    /// Skips the calling test, saying why, when MPIN_TEST_POSTGRES is not set.
    static func requirePostgres() throws {
        if TestPostgres.isConfigured && TestPostgres.url == nil {
            XCTFail("\(TestPostgres.environmentVariable) is not a postgresql://USER@HOST:PORT/DB URL")
        }
        try XCTSkipIf(!TestPostgres.isConfigured,
                      "\(TestPostgres.environmentVariable) is not set: PostgreSQL variant skipped (make test-postgres runs it)")
    }
}

// MARK: The server-level storage tests on PostgreSQL

extension TestStorage {
    /// Each variant class's own test: XCTest on Linux finds a class, and with it every test it
    /// inherits, only through a test the class declares. It checks what the variant is for: a
    /// server of this backend keeps its identities in PostgreSQL, and makes no SQLite file.
    static func assertServerKeepsStateInPostgres() async throws {
        try requirePostgres()
        let server = try await TestServer(storage: .postgres)
        try await server.start()
        do {
            var pat = MPinTestClient(http: server.client)
            try await pat.registerFully("pat", pin: "1234")
            let status = try await pat.authenticate(pin: "1234")
            XCTAssertEqual(status, 200)
            let database = try XCTUnwrap(server.postgresDatabase)
            let identities = try await TestPostgres.integer("SELECT count(*) FROM identities WHERE user_id = 'pat'", database: database)
            XCTAssertEqual(identities, 1)
            XCTAssertFalse(FileManager.default.fileExists(atPath: server.dataDir + "/mpin.sqlite"))
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }
}

final class EndToEndPostgresTests: EndToEndTests {
    override class var storage: TestStorage { .postgres }
    override func setUp() async throws { try await super.setUp(); try TestStorage.requirePostgres() }
    func testVariantKeepsItsStateInPostgreSQL() async throws { try await TestStorage.assertServerKeepsStateInPostgres() }
}

final class RobustnessPostgresTests: RobustnessTests {
    override class var storage: TestStorage { .postgres }
    override func setUp() async throws { try await super.setUp(); try TestStorage.requirePostgres() }
    func testVariantKeepsItsStateInPostgreSQL() async throws { try await TestStorage.assertServerKeepsStateInPostgres() }
}

final class DeviceLoginPostgresTests: DeviceLoginTests {
    override class var storage: TestStorage { .postgres }
    override func setUp() async throws { try await super.setUp(); try TestStorage.requirePostgres() }
    func testVariantKeepsItsStateInPostgreSQL() async throws { try await TestStorage.assertServerKeepsStateInPostgres() }
}

final class OIDCFlowPostgresTests: OIDCFlowTests {
    override class var storage: TestStorage { .postgres }
    override func setUp() async throws { try await super.setUp(); try TestStorage.requirePostgres() }
    func testVariantKeepsItsStateInPostgreSQL() async throws { try await TestStorage.assertServerKeepsStateInPostgres() }
}

// MARK: Schema versions

/// A database migrated by a newer mpin-server is refused, naming both versions; an older one
/// is migrated.
final class SchemaVersionTests: XCTestCase {
    func testSQLiteNewerSchemaIsRefusedNamingBothVersions() async throws {
        let server = try TestServer()
        defer { try? FileManager.default.removeItem(atPath: server.dataDir) }
        let file = server.dataDir + "/mpin.sqlite"
        let known = try await DatabaseQueue(path: file).read { try Int.fetchOne($0, sql: "PRAGMA user_version") ?? 0 }
        XCTAssertGreaterThanOrEqual(known, 6, "a fresh file records its schema version")
        try await DatabaseQueue(path: file).write { try $0.execute(sql: "PRAGMA user_version = 99") }
        do {
            try await server.start()
            await server.stop()
            XCTFail("a server started on a schema newer than it knows")
        } catch let e as SetupError {
            XCTAssertEqual(e, .schemaTooNew(database: file, found: 99, known: known))
            XCTAssertTrue(e.description.contains("schema version 99 is newer than this mpin-server knows (schema version \(known))"),
                          e.description)
        }
        // An older file (no recorded version yet, as before versions were recorded) is brought up to date.
        try await DatabaseQueue(path: file).write { try $0.execute(sql: "PRAGMA user_version = 0") }
        try await server.start()
        await server.stop()
        let after = try await DatabaseQueue(path: file).read { try Int.fetchOne($0, sql: "PRAGMA user_version") ?? 0 }
        XCTAssertEqual(after, known)
    }

    func testPostgresNewerSchemaIsRefusedNamingBothVersions() async throws {
        try TestStorage.requirePostgres()
        let server = try await TestServer(storage: .postgres)
        do {
            try await server.start()  // creates the schema
            await server.stop()
            let db = server.postgresDatabase!
            let known = try await TestPostgres.integer("SELECT version FROM mpin_schema", database: db) ?? 0
            XCTAssertGreaterThanOrEqual(known, 2, "version 1 and DVS's 2")
            try await TestPostgres.execute("UPDATE mpin_schema SET version = 42", database: db)
            do {
                try await server.start()
                await server.stop()
                XCTFail("a server started on a schema newer than it knows")
            } catch let e as SetupError {
                guard case .schemaTooNew(_, 42, known) = e else { return XCTFail("\(e)") }
                XCTAssertTrue(e.description.contains("schema version 42 is newer than this mpin-server knows (schema version \(known))"),
                              e.description)
            }
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }
}

// MARK: mpin-server processes on one PostgreSQL database

/// `mpin-server init --database`, the `user` commands and several `serve` processes (nodes)
/// on one database: the wrong-PIN counter across nodes, parallel logins across nodes, and a
/// node killed under load.
final class MultiNodeTests: XCTestCase {
    override func setUp() async throws { try await super.setUp(); try TestStorage.requirePostgres() }

    private var binary: URL {
        get throws {
            let dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            for candidate in [dir, dir.deletingLastPathComponent()] {
                let url = candidate.appendingPathComponent("mpin-server")
                if FileManager.default.isExecutableFile(atPath: url.path) { return url }
            }
            XCTFail("mpin-server binary not next to the test bundle (\(dir.path))")
            throw CocoaError(.fileNoSuchFile)
        }
    }

    /// Runs mpin-server; returns the exit status, stdout and stderr.
    @discardableResult
    private func run(_ args: [String], expectStatus: Int32? = 0) throws -> (Int32, String, String) {
        let p = Process()
        p.executableURL = try binary
        p.arguments = args
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let result = (p.terminationStatus, String(decoding: outData, as: UTF8.self), String(decoding: errData, as: UTF8.self))
        if let expectStatus { XCTAssertEqual(p.terminationStatus, expectStatus, args.joined(separator: " ") + ": " + result.2) }
        return result
    }

    /// `mpin-server serve --port 0` on `dir`; the process and its port.
    private func serve(_ dir: String) throws -> (Process, Int) {
        let p = Process()
        p.executableURL = try binary
        p.arguments = ["serve", "--data", dir, "--host", "127.0.0.1", "--port", "0"]
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        var logged = ""
        var port: Int? = nil
        let handle = err.fileHandleForReading
        while port == nil {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            logged += String(decoding: chunk, as: UTF8.self)
            if let line = logged.split(separator: "\n").first(where: { $0.contains("mpin-server ready") }),
               let r = line.range(of: "http://127.0.0.1:") {
                port = Int(line[r.upperBound...].prefix { $0.isNumber })
            }
        }
        guard let port else {
            p.terminate(); p.waitUntilExit()
            XCTFail("no ready line: \(logged)")
            throw CancellationError()
        }
        handle.readabilityHandler = { _ = $0.availableData }
        return (p, port)
    }

    /// A deployment of two nodes: `init --database` on a fresh database, the directory copied
    /// for the second node (README: adding a node), both serving.
    private struct Fleet {
        let database: String
        let dirs: [String]
        var processes: [Process]
        let nodes: [HTTPClient]
    }

    private func startFleet(_ adjust: [String: Any] = [:]) async throws -> Fleet {
        let (name, url) = try await TestPostgres.createDatabase()
        let base = NSTemporaryDirectory() + "mpin-nodes-" + UUID().uuidString
        let dirs = [base + "-a", base + "-b"]
        do {
            try run(["init", "--data", dirs[0], "--auto-activate", "--database", url])
            if !adjust.isEmpty {
                let path = dirs[0] + "/config.json"
                var config = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as! [String: Any]
                for (k, v) in adjust { config[k] = v }
                let data = try JSONSerialization.data(withJSONObject: config)
                try data.write(to: URL(fileURLWithPath: path))
            }
            try FileManager.default.copyItem(atPath: dirs[0], toPath: dirs[1])
            XCTAssertFalse(FileManager.default.fileExists(atPath: dirs[0] + "/mpin.sqlite"), "no SQLite file with --database")
            let a = try serve(dirs[0]), b = try serve(dirs[1])
            return Fleet(database: name, dirs: dirs, processes: [a.0, b.0],
                         nodes: [HTTPClient(base: "http://127.0.0.1:\(a.1)"), HTTPClient(base: "http://127.0.0.1:\(b.1)")])
        } catch {
            for d in dirs { try? FileManager.default.removeItem(atPath: d) }
            try? await TestPostgres.dropDatabase(name)
            throw error
        }
    }

    private func stopFleet(_ fleet: Fleet) async {
        for p in fleet.processes where p.isRunning {
            p.terminate()
            p.waitUntilExit()
        }
        for d in fleet.dirs { try? FileManager.default.removeItem(atPath: d) }
        try? await TestPostgres.dropDatabase(fleet.database)
    }

    /// The user as `mpin-server user list --json` on the first node's directory shows it.
    private func listed(_ fleet: Fleet, _ user: String) throws -> [String: Any]? {
        let (_, out, _) = try run(["user", "list", "--json", "--data", fleet.dirs[0]])
        let users = try JSONSerialization.jsonObject(with: Data(out.utf8)) as! [[String: Any]]
        return users.first { $0["userId"] as? String == user }
    }

    /// `mpin_blocks_total` summed over the nodes' /metrics.
    private func blocks(_ fleet: Fleet) async throws -> Int {
        var total = 0
        for node in fleet.nodes {
            let text = String(decoding: try await node.get("/metrics").body, as: UTF8.self)
            for line in text.split(separator: "\n") where line.hasPrefix("mpin_blocks_total") {
                total += Int(Double(line.split(separator: " ").last ?? "0") ?? 0)
            }
        }
        return total
    }

    func testInitDatabaseUserCommandsAndHealth() async throws {
        let fleet = try await startFleet()
        do {
            // `user add` on one node's directory; the other node sees the user.
            let (_, code, _) = try run(["user", "add", "zoe", "--data", fleet.dirs[1]])
            XCTAssertEqual(code.trimmingCharacters(in: .whitespacesAndNewlines).count, 12)
            XCTAssertEqual(try listed(fleet, "zoe")?["state"] as? String, "pending")
            try run(["user", "revoke", "zoe", "--data", fleet.dirs[0]])
            XCTAssertEqual(try listed(fleet, "zoe")?["state"] as? String, "revoked")
            try run(["user", "delete", "nobody", "--data", fleet.dirs[0]], expectStatus: 64)
            let (_, app, _) = try run(["app", "add", "Wiki", "--redirect-uri", "https://wiki.example/cb", "--json",
                                       "--data", fleet.dirs[0]])
            XCTAssertTrue(app.contains("client_secret") || app.contains("clientSecret"), app)
            let (_, apps, _) = try run(["app", "list", "--data", fleet.dirs[1]])
            XCTAssertTrue(apps.contains("Wiki"), apps)
            for node in fleet.nodes {
                let health = try await node.get("/health")
                XCTAssertEqual(health.status, 200)
                XCTAssertEqual(health.object?["database"]?.string, "ok")
            }
            // Both ID-token keys were made at init, so both nodes publish (and sign with) the same.
            for key in ["oidc-es256.pem", "oidc-rs256.pem"] {
                XCTAssertTrue(FileManager.default.fileExists(atPath: fleet.dirs[0] + "/" + key), key)
            }
            let jwksA = try await fleet.nodes[0].get("/oidc/jwks").object?["keys"]
            let jwksB = try await fleet.nodes[1].get("/oidc/jwks").object?["keys"]
            XCTAssertEqual(jwksA, jwksB)
            // A second init on the same database finds the schema and keeps it.
            let again = NSTemporaryDirectory() + "mpin-nodes-again-" + UUID().uuidString
            defer { try? FileManager.default.removeItem(atPath: again) }
            var url = TestPostgres.url!
            url.database = fleet.database
            try run(["init", "--data", again, "--database", url.description])
            XCTAssertEqual(try listed(fleet, "zoe")?["state"] as? String, "revoked")
            // An unreachable database: init says why and leaves no half-made directory behind.
            let bad = NSTemporaryDirectory() + "mpin-nodes-bad-" + UUID().uuidString
            defer { try? FileManager.default.removeItem(atPath: bad) }
            url.database = "no_such_database_here"
            let (status, _, err) = try run(["init", "--data", bad, "--database", url.description], expectStatus: nil)
            XCTAssertEqual(status, 64)
            XCTAssertTrue(err.contains("no_such_database_here"), err)
            XCTAssertFalse(FileManager.default.fileExists(atPath: bad + "/config.json"))
            try run(["init", "--data", bad, "--database", "mysql://x@y/z"], expectStatus: 64)
            // A newer schema: serve refuses, naming both versions.
            let known = try await TestPostgres.integer("SELECT version FROM mpin_schema", database: fleet.database) ?? 0
            try await TestPostgres.execute("UPDATE mpin_schema SET version = 77", database: fleet.database)
            let (s2, _, err2) = try run(["serve", "--data", fleet.dirs[0], "--port", "0"], expectStatus: nil)
            XCTAssertEqual(s2, 64)
            XCTAssertTrue(err2.contains("schema version 77 is newer than this mpin-server knows (schema version \(known))"), err2)
            try await TestPostgres.execute("UPDATE mpin_schema SET version = \(known)", database: fleet.database)
        } catch { await stopFleet(fleet); throw error }
        await stopFleet(fleet)
    }

    /// Pass-1 state is the one thing a node keeps to itself: pass 2 on the other node finds none
    /// (403); the final step may go to either node.
    func testPassTwoStaysOnItsNodeTheFinalStepDoesNot() async throws {
        let fleet = try await startFleet()
        do {
            var c = MPinTestClient(http: fleet.nodes[0])
            try await c.registerFully("paula", pin: "7777")
            let tp = try await c.timePermit()!
            let x = try SystemRandom.scalar()
            let c1 = try MPin.client1(date: tp.date, mpinID: c.mpinID, x: x, pin: MPinTestClient.pinValue("7777"),
                                      token: c.token, timePermit: tp.permit)
            let p1 = try await fleet.nodes[0].post("/rps/pass1", Pass1Request(mpinId: c.mpinIDHex, ut: Hex.encode(c1.ut!),
                                                                                u: Hex.encode(c1.u)))
            XCTAssertEqual(p1.status, 200)
            let v = try MPin.client2(x: x, y: Hex.decode(try p1.decode(Pass1Response.self).y)!, sec: c1.sec)
            let elsewhere = try await fleet.nodes[1].post("/rps/pass2", Pass2Request(mpinId: c.mpinIDHex, v: Hex.encode(v),
                                                                                      wid: "0", otp: false))
            XCTAssertEqual(elsewhere.status, 403, "pass 2 on another node than pass 1")
            let (p2, _) = try await c.passes(pin: "7777", permit: tp)
            let final = try await c.using(fleet.nodes[1]).finalStep(p2)
            XCTAssertEqual(final, 200, "the final step on the other node")
        } catch { await stopFleet(fleet); throw error }
        await stopFleet(fleet)
    }

    /// 50 wrong PINs of one identity at once, spread over both nodes (pass 1 and 2 on one node,
    /// the final step on the other): counts 1 and 2 answer 401, the third blocks, once.
    func testFiftyParallelWrongPINsOverTwoNodesBlockExactlyOnce() async throws {
        let fleet = try await startFleet()
        do {
            var h = MPinTestClient(http: fleet.nodes[0])
            try await h.registerFully("henry", pin: "1234")
            var results: [(Pass2Response, Int)] = []
            let permit = try await h.timePermit()!
            for i in 0..<50 {
                let node = i % 2
                let (p2, _) = try await h.using(fleet.nodes[node]).passes(pin: String(5000 + i), permit: permit)
                results.append((p2, 1 - node))
            }
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for (r, node) in results {
                    let http = fleet.nodes[node]
                    group.addTask {
                        try await http.post("/mpinAuthenticate", AuthenticateRequest(mpinResponse: MPinResponse(r))).status
                    }
                }
                var s: [Int] = []
                for try await x in group { s.append(x) }
                return s
            }
            let blocked = try await blocks(fleet)
            let summary = try listed(fleet, "henry")
            print("multinode wrong PINs: attempts=50 over 2 nodes, 401=\(statuses.filter { $0 == 401 }.count)"
                  + " 410=\(statuses.filter { $0 == 410 }.count) counter=\(summary?["failedAttempts"] ?? "?")"
                  + " blocked=\(summary?["blocked"] ?? "?") blocks=\(blocked)")
            XCTAssertEqual(statuses.count, 50)
            XCTAssertEqual(statuses.filter { $0 == 401 }.count, 2)
            XCTAssertEqual(statuses.filter { $0 == 410 }.count, 48)
            XCTAssertEqual(summary?["failedAttempts"] as? Int, 3)
            XCTAssertEqual(summary?["blocked"] as? Bool, true)
            XCTAssertEqual(blocked, 1, "the identity is blocked exactly once over both nodes")
            // Blocked on both nodes, even with the right PIN.
            for node in fleet.nodes {
                let v = try await h.using(node).authenticate(pin: "1234")
                XCTAssertEqual(v, 410)
            }
        } catch { await stopFleet(fleet); throw error }
        await stopFleet(fleet)
    }

    /// 200 identities log in at once, half on each node: all succeed.
    func testTwoHundredParallelLoginsOverTwoNodesAllSucceed() async throws {
        let fleet = try await startFleet()
        do {
            var clients: [MPinTestClient] = []
            for i in 0..<200 {
                var c = MPinTestClient(http: fleet.nodes[i % 2])
                try await c.registerFully("user\(i)", pin: String(1000 + i))
                clients.append(c.using(fleet.nodes[(i / 2) % 2]))
            }
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for (i, c) in clients.enumerated() {
                    group.addTask { try await c.authenticate(pin: String(1000 + i)) }
                }
                var s: [Int] = []
                for try await x in group { s.append(x) }
                return s
            }
            print("multinode logins: 200 parallel over 2 nodes, succeeded=\(statuses.filter { $0 == 200 }.count)")
            XCTAssertEqual(statuses, [Int](repeating: 200, count: 200))
        } catch { await stopFleet(fleet); throw error }
        await stopFleet(fleet)
    }

    /// Registrations and wrong PINs on both nodes; node B is killed (SIGKILL) in the middle.
    /// Every registration whose share fetch got 200 and every wrong PIN that got its 401 is in
    /// the database; node A serves throughout and after.
    func testKillingOneNodeUnderLoadLosesNothingCommitted() async throws {
        let fleet = try await startFleet(["maxInvalidLoginAttempts": 1000])
        do {
            var victims: [MPinTestClient] = []
            for (i, node) in fleet.nodes.enumerated() {
                var v = MPinTestClient(http: node)
                try await v.registerFully("victor\(i)", pin: "1234")
                victims.append(v)
            }
            let permits = [try await victims[0].timePermit()!, try await victims[1].timePermit()!]
            struct Tally: Sendable { var node = 0; var registered: [String] = []; var counted = 0; var sent = 0; var errors = 0 }
            let nodeB = fleet.processes[1]
            // Node B is killed after 2 s; node A's clients go on until 4 s, before and after the kill.
            let killAfter: UInt64 = 2_000_000_000, endA = Date().addingTimeInterval(4)
            let tallies = try await withThrowingTaskGroup(of: Tally?.self) { group in
                for node in 0..<2 {
                    let http = fleet.nodes[node]
                    for w in 0..<3 {
                        group.addTask {
                            // Registers continuously: the share fetch (signature) commits the identity.
                            var t = Tally(node: node)
                            for i in 0..<100_000 {
                                if node == 0, Date() > endA { break }
                                do {
                                    let reg = try await http.put("/rps/user", RegisterRequest(userId: "load\(node)-\(w)-\(i)"))
                                    guard reg.status == 200 else { t.errors += 1; continue }
                                    let r = try reg.decode(RegisterResponse.self)
                                    let s = try await http.get("/rps/signature/\(r.mpinId)?regOTT=\(r.regOTT)")
                                    if s.status == 200 { t.registered.append(r.mpinId) } else { t.errors += 1 }
                                } catch {
                                    t.errors += 1
                                    if node == 1 { break }  // node B is gone
                                }
                            }
                            return t
                        }
                    }
                    let victim = victims[node], permit = permits[node]
                    group.addTask {
                        // Wrong PINs of one identity, pass 1 to the final step on this node.
                        var t = Tally(node: node)
                        for i in 0..<100_000 {
                            if node == 0, Date() > endA { break }
                            do {
                                let (p2, _) = try await victim.passes(pin: String(5000 + i % 4000), permit: permit)
                                t.sent += 1
                                let status = try await victim.finalStep(p2)
                                if status == 401 { t.counted += 1 } else { t.errors += 1 }
                            } catch {
                                t.errors += 1
                                if node == 1 { break }
                            }
                        }
                        return t
                    }
                }
                group.addTask {
                    try await Task.sleep(nanoseconds: killAfter)
                    kill(nodeB.processIdentifier, SIGKILL)
                    return nil
                }
                var all: [Tally] = []
                for try await t in group { if let t { all.append(t) } }
                return all
            }
            nodeB.waitUntilExit()
            XCTAssertEqual(nodeB.terminationReason, .uncaughtSignal)
            let a = tallies.filter { $0.node == 0 }, b = tallies.filter { $0.node == 1 }
            let registeredB = b.flatMap(\.registered), registeredA = a.flatMap(\.registered)
            // Everything committed through either node is there, read through node A.
            var lost = 0
            for id in registeredA + registeredB {
                if try await fleet.nodes[0].get("/rps/timePermit/\(id)").status != 200 { lost += 1 }
            }
            let counterB = try listed(fleet, "victor1")?["failedAttempts"] as? Int ?? -1
            let counterA = try listed(fleet, "victor0")?["failedAttempts"] as? Int ?? -1
            let countedB = b.map(\.counted).reduce(0, +), sentB = b.map(\.sent).reduce(0, +)
            let countedA = a.map(\.counted).reduce(0, +)
            // Node A still serves a whole login.
            var fresh = MPinTestClient(http: fleet.nodes[0])
            try await fresh.registerFully("after-kill", pin: "2222")
            let after = try await fresh.authenticate(pin: "2222")
            print("multinode kill: node B registrations committed=\(registeredB.count) wrong PINs answered 401=\(countedB)"
                  + " sent=\(sentB) counter=\(counterB); node A registrations=\(registeredA.count) errors=\(a.map(\.errors).reduce(0, +))"
                  + " wrong PINs=\(countedA) counter=\(counterA); lost registrations=\(lost); login on A after the kill=\(after)")
            XCTAssertGreaterThan(registeredB.count, 3, "node B committed registrations before the kill")
            XCTAssertEqual(lost, 0, "a committed registration was lost")
            XCTAssertGreaterThanOrEqual(counterB, countedB, "a wrong PIN answered 401 was not counted")
            XCTAssertLessThanOrEqual(counterB, sentB)
            XCTAssertEqual(counterA, countedA)
            XCTAssertGreaterThan(registeredA.count, registeredB.count, "node A went on serving after the kill")
            XCTAssertEqual(a.map(\.errors).reduce(0, +), 0, "node A failed requests")
            XCTAssertEqual(after, 200)
        } catch { await stopFleet(fleet); throw error }
        await stopFleet(fleet)
    }
}

/// The concurrency and signed-verdict checks of docs/SECURITY.md §6.1 and §6.5 on PostgreSQL (the
/// pass-2 records live in the database there, the authOTT carrying the nonce).
final class ConcurrentLoginPostgresTests: ConcurrentLoginTests {
    override class var storage: TestStorage { .postgres }
    override func setUp() async throws { try await super.setUp(); try TestStorage.requirePostgres() }
    func testVariantKeepsItsStateInPostgreSQL() async throws { try await TestStorage.assertServerKeepsStateInPostgres() }
}

final class ServerReviewPostgresTests: ServerReviewTests {
    override class var storage: TestStorage { .postgres }
    override func setUp() async throws { try await super.setUp(); try TestStorage.requirePostgres() }
    func testVariantKeepsItsStateInPostgreSQL() async throws { try await TestStorage.assertServerKeepsStateInPostgres() }
}
