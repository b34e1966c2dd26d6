import Foundation
import MPinServer
import MPinTestSupport
import MPinWire
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The `mpin-server` executable as scripts use it: init, serve (ready line, SIGTERM), user.
final class CommandLineTests: XCTestCase {
    private var binary: URL {
        get throws {
            let dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            for candidate in [dir, dir.deletingLastPathComponent()] {
                let url = candidate.appendingPathComponent("mpin-server")
                if FileManager.default.isExecutableFile(atPath: url.path) { return url }
            }
            // `swift build` builds it with the tests; its absence is a broken build, not a skip.
            XCTFail("mpin-server binary not next to the test bundle (\(dir.path))")
            throw CocoaError(.fileNoSuchFile)
        }
    }

    /// Runs mpin-server with `args`, checks its exit status and returns its standard output.
    @discardableResult
    private func run(_ args: [String], expectStatus: Int32 = 0) throws -> String {
        let result = try runProcess(try binary.path, args)
        XCTAssertEqual(result.status, expectStatus, args.joined(separator: " "))
        return result.stdout
    }

    /// Starts `mpin-server serve --port 0` and reads the port from its ready line.
    private func startServe(_ dir: String) throws -> (Process, Int, String) {
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
        // Keep draining stderr so the server never blocks on a full pipe.
        handle.readabilityHandler = { _ = $0.availableData }
        return (p, port, logged)
    }

    func testKillDuringLoadLosesNoCommittedRegistration() async throws {
        let dir = NSTemporaryDirectory() + "mpin-kill-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try run(["init", "--data", dir, "--auto-activate"])
        let (p, port, _) = try startServe(dir)
        let http = HTTPClient(base: "http://127.0.0.1:\(port)")
        // Four clients register continuously; each finished (200) share fetch is committed.
        let committed = try await withThrowingTaskGroup(of: [String].self) { group in
            for w in 0..<4 {
                group.addTask {
                    var done: [String] = []
                    for i in 0..<1000 {
                        guard let reg = try? await http.put("/rps/user", RegisterRequest(userId: "load\(w)-\(i)")),
                              reg.status == 200, let r = try? reg.decode(RegisterResponse.self),
                              let s = try? await http.get("/rps/signature/\(r.mpinId)?regOTT=\(r.regOTT)") else { break }
                        if s.status == 200 { done.append(r.mpinId) }
                    }
                    return done
                }
            }
            group.addTask {
                try await Task.sleep(nanoseconds: 1_500_000_000)
                kill(p.processIdentifier, SIGKILL)
                return []
            }
            var all: [String] = []
            for try await d in group { all += d }
            return all
        }
        p.waitUntilExit()
        XCTAssertEqual(p.terminationReason, .uncaughtSignal)
        XCTAssertGreaterThan(committed.count, 5)
        let (p2, port2, _) = try startServe(dir)
        let http2 = HTTPClient(base: "http://127.0.0.1:\(port2)")
        for id in committed {
            let t = try await http2.get("/rps/timePermit/\(id)")
            XCTAssertEqual(t.status, 200, "registration lost after kill -9")
        }
        p2.terminate()
        p2.waitUntilExit()
        XCTAssertEqual(p2.terminationStatus, 0)
    }

    func testInitServeAndUserCommands() async throws {
        let dir = NSTemporaryDirectory() + "mpin-cli-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Before init (README.md, "Run mpin-server"): the error names the command that makes the
        // directory.
        let early = try runProcess(try binary.path, ["user", "add", "zoe", "--data", dir])
        XCTAssertNotEqual(early.status, 0)
        XCTAssertTrue(early.stderr.contains("run `mpin-server init --data \(dir)` first"), early.stderr)
        try run(["init", "--data", dir])
        try run(["init", "--data", dir], expectStatus: 64)  // never overwrites keys
        let attrs = try FileManager.default.attributesOfItem(atPath: dir)
        XCTAssertEqual((attrs[.posixPermissions] as? NSNumber)?.intValue, 0o700)
        for f in ["dta1.share", "dta2.share", "app.key", "config.json", "mpin.sqlite"] {
            let a = try FileManager.default.attributesOfItem(atPath: dir + "/" + f)
            XCTAssertEqual((a[.posixPermissions] as? NSNumber)?.intValue, 0o600, f)
        }

        let code = try run(["user", "add", "zoe", "--data", dir]).trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertEqual(code.count, 12)
        let listed = try run(["user", "list", "--json", "--data", dir])
        let users = try JSONDecoder().decode([UserSummary].self, from: Data(listed.utf8))
        XCTAssertEqual(users.map(\.userId), ["zoe"])
        XCTAssertEqual(users.first?.state, "pending")
        try run(["user", "activate", "zoe", "--data", dir])
        try run(["user", "revoke", "zoe", "--json", "--data", dir])
        XCTAssertEqual(try JSONDecoder().decode([UserSummary].self,
                                                from: Data(try run(["user", "list", "--json", "--data", dir]).utf8)).first?.state,
                       "revoked")
        try run(["user", "unblock", "nobody", "--data", dir], expectStatus: 64)
        try run(["user", "delete", "zoe", "--data", dir])
        XCTAssertEqual(try run(["user", "list", "--data", dir]), "")

        // serve: one ready line naming the URL, then a clean stop on SIGTERM.
        let (p, bound, logged) = try startServe(dir)
        let status = try await HTTPClient(base: "http://127.0.0.1:\(bound)").get("/status")
        XCTAssertEqual(status.status, 200)
        p.terminate()  // SIGTERM
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0)
        XCTAssertFalse(logged.contains(try String(contentsOfFile: dir + "/app.key", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    /// `app add|list|delete` (docs/MFA.md §2): credentials printed once, only the secret's hash on
    /// disk, bad redirect URIs refused, deleting an unknown app is an error.
    func testAppCommands() throws {
        let dir = NSTemporaryDirectory() + "mpin-cli-app-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try run(["init", "--data", dir])
        XCTAssertEqual(try run(["app", "list", "--data", dir]), "")

        let out = try run(["app", "add", "Wiki", "--redirect-uri", "https://wiki.example/cb", "--data", dir])
        let lines = Dictionary(uniqueKeysWithValues: out.split(separator: "\n").compactMap { line -> (String, String)? in
            let parts = line.split(separator: " ", maxSplits: 1)
            return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
        })
        let clientID = try XCTUnwrap(lines["client_id:"])
        let secret = try XCTUnwrap(lines["client_secret:"])
        XCTAssertTrue(clientID.hasPrefix("cid-"))
        XCTAssertEqual(clientID.count, 36)
        XCTAssertEqual(secret.count, 43)
        XCTAssertTrue(secret.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })

        let second = try JSONDecoder().decode(NewAppCredentials.self, from: Data(try run(
            ["app", "add", "Shop", "--redirect-uri", "http://127.0.0.1:9000/callback?x=1", "--id-token-alg", "ES256",
             "--json", "--data", dir]).utf8))
        XCTAssertNotEqual(second.clientId, clientID)
        XCTAssertNotEqual(second.clientSecret, secret)

        let apps = try JSONDecoder().decode([AppSummary].self,
                                            from: Data(try run(["app", "list", "--json", "--data", dir]).utf8))
        XCTAssertEqual(Set(apps.map(\.clientId)), [clientID, second.clientId])
        XCTAssertEqual(apps.first { $0.clientId == clientID }?.redirectURI, "https://wiki.example/cb")
        XCTAssertEqual(apps.first { $0.clientId == clientID }?.name, "Wiki")
        XCTAssertEqual(apps.first { $0.clientId == clientID }?.idTokenAlg, "RS256", "OpenID Connect's default")
        XCTAssertEqual(apps.first { $0.clientId == second.clientId }?.idTokenAlg, "ES256")
        let plain = try run(["app", "list", "--data", dir])
        XCTAssertTrue(plain.contains("\tWiki\thttps://wiki.example/cb\tRS256"), plain)
        XCTAssertFalse(plain.contains(secret))
        XCTAssertTrue(plain.contains(clientID))

        // Only the secret's hash reaches the database file.
        for file in ["mpin.sqlite", "mpin.sqlite-wal"] {
            guard let bytes = FileManager.default.contents(atPath: dir + "/" + file) else { continue }
            XCTAssertNil(bytes.range(of: Data(secret.utf8)), file)
        }

        for bad in ["wiki.example/cb", "ftp://wiki.example/cb", "https://wiki.example/cb#frag", "https:///cb", ""] {
            try run(["app", "add", "Bad", "--redirect-uri", bad, "--data", dir], expectStatus: 64)
        }
        try run(["app", "add", "", "--redirect-uri", "https://x.example/", "--data", dir], expectStatus: 64)
        for alg in ["none", "HS256", "rs256", ""] {
            try run(["app", "add", "Bad", "--redirect-uri", "https://x.example/", "--id-token-alg", alg, "--data", dir], expectStatus: 64)
        }
        XCTAssertEqual(try JSONDecoder().decode([AppSummary].self,
                                                from: Data(try run(["app", "list", "--json", "--data", dir]).utf8)).count, 2)

        try run(["app", "delete", clientID, "--data", dir])
        try run(["app", "delete", clientID, "--data", dir], expectStatus: 64)
        XCTAssertEqual(try JSONDecoder().decode([AppSummary].self,
                                                from: Data(try run(["app", "list", "--json", "--data", dir]).utf8))
                        .map(\.clientId), [second.clientId])
    }
}
