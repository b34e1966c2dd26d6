import Foundation
import MPinServer
import XCTest

/// The `mpin-server` executable as scripts use it: init, serve (ready line, SIGTERM), user.
final class CommandLineTests: XCTestCase {
    private var binary: URL {
        get throws {
            let dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            for candidate in [dir, dir.deletingLastPathComponent()] {
                let url = candidate.appendingPathComponent("mpin-server")
                if FileManager.default.isExecutableFile(atPath: url.path) { return url }
            }
            throw XCTSkip("mpin-server binary not next to the test bundle (\(dir.path))")
        }
    }

    @discardableResult
    private func run(_ args: [String], expectStatus: Int32 = 0) throws -> String {
        let p = Process()
        p.executableURL = try binary
        p.arguments = args
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, expectStatus, args.joined(separator: " "))
        return String(decoding: data, as: UTF8.self)
    }

    func testInitServeAndUserCommands() async throws {
        let dir = NSTemporaryDirectory() + "mpin-cli-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: dir) }
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
        let bound = try XCTUnwrap(port, logged)
        let status = try await HTTPClient(base: "http://127.0.0.1:\(bound)").get("/status")
        XCTAssertEqual(status.status, 200)
        p.terminate()  // SIGTERM
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0)
        XCTAssertFalse(logged.contains(try String(contentsOfFile: dir + "/app.key", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)))
    }
}
