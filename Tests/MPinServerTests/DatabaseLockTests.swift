import Foundation
import MPinServer
import MPinWire
import XCTest

/// Nothing blocks an event loop (docs/PERFORMANCE.md §2.2): while another process holds the SQLite
/// write lock (as `mpin-server user …` or a checkpoint may), the requests that must write wait for
/// it off the event loops, and what needs no write (another identity's token-mode login on a fresh
/// connection, `/health`) takes its usual time. Before, each waiting write held an event-loop
/// thread for up to 2 s, with every connection on it.
final class DatabaseLockTests: XCTestCase {
    /// Holds an exclusive transaction on `path` for `seconds` (Python's sqlite3, another
    /// process, as an administrator's command would be); prints `locked` once it has the lock.
    private static let lockHolder = """
        import sqlite3, sys, time
        c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
        c.execute("BEGIN EXCLUSIVE")
        c.execute("INSERT INTO sessions (token_hash, user_id, expires) VALUES ('lock-holder', 'nobody', 0)")
        print("locked", flush=True)
        time.sleep(float(sys.argv[2]))
        c.execute("ROLLBACK")
        """

    func testLoginsOfAnotherIdentityKeepTheirPaceWhileAnotherProcessHoldsTheLock() async throws {
        let server = try TestServer()
        try await server.start()
        do {
            var stella = MPinTestClient(http: server.client)
            try await stella.registerFully("stella", pin: "2222")
            let registered = stella
            let base = server.client.base
            // A token-mode login (pass 1, pass 2, the RPA's `/authenticate`) on a fresh connection.
            @Sendable func login() async throws -> Duration {
                let fresh = registered.using(HTTPClient(base: base))
                let start = ContinuousClock.now
                let (p2, _) = try await fresh.passes(pin: "2222")
                let verdict = try await fresh.http.post("/authenticate", TokenAuthenticateRequest(authOTT: p2.authOTT))
                XCTAssertEqual(verdict.status, 200)
                return ContinuousClock.now - start
            }
            _ = try await login()  // warm-up
            var usual: [Duration] = []
            for _ in 0..<5 { usual.append(try await login()) }

            let holder = Process()
            holder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            holder.arguments = ["python3", "-c", Self.lockHolder, server.dataDir + "/mpin.sqlite", "2"]
            let out = Pipe()
            holder.standardOutput = out
            try holder.run()
            defer { if holder.isRunning { holder.terminate() }; holder.waitUntilExit() }
            let said = String(decoding: out.fileHandleForReading.availableData, as: UTF8.self)
            XCTAssertEqual(said.trimmingCharacters(in: .whitespacesAndNewlines), "locked")
            let locked = ContinuousClock.now

            // Writes that must wait for the lock, on fresh connections: more than there are
            // event loops, so that blocking ones would hold every loop.
            let writers = Task {
                try await withThrowingTaskGroup(of: (Int, ContinuousClock.Instant).self) { group in
                    for i in 0..<8 {
                        group.addTask {
                            let r = try await HTTPClient(base: base).put("/rps/user", RegisterRequest(userId: "waiting\(i)", mobile: 1, activateCode: nil))
                            return (r.status, ContinuousClock.now)
                        }
                    }
                    var done: [(Int, ContinuousClock.Instant)] = []
                    for try await d in group { done.append(d) }
                    return done
                }
            }
            try await Task.sleep(for: .milliseconds(100))

            var underLock: [Duration] = []
            for _ in 0..<5 { underLock.append(try await login()) }
            let healthStart = ContinuousClock.now
            let health = try await HTTPClient(base: base).get("/health")
            let healthTime = ContinuousClock.now - healthStart
            let loginsDone = ContinuousClock.now

            let written = try await writers.value
            // The lock was held throughout: no waiting write got through before the logins ended.
            XCTAssertLessThan(loginsDone - locked, .seconds(2), "the logins ran while the lock was held")
            XCTAssertTrue(written.allSatisfy { $0.1 > loginsDone }, "a write completed while another process held the lock")
            // They were answered (stored once the lock went, or 503 if it outlasted their wait), never dropped.
            XCTAssertTrue(written.allSatisfy { $0.0 == 200 || $0.0 == 503 }, "\(written.map(\.0))")

            func median(_ d: [Duration]) -> Duration { d.sorted()[d.count / 2] }
            XCTAssertLessThanOrEqual(median(underLock), median(usual) + .milliseconds(100),
                                     "usual \(usual), under the lock \(underLock)")
            XCTAssertTrue(underLock.allSatisfy { $0 < .seconds(1) }, "under the lock \(underLock)")
            XCTAssertEqual(health.status, 200)
            XCTAssertEqual(health.object?["database"]?.string, "ok")
            XCTAssertLessThanOrEqual(healthTime, median(usual) + .milliseconds(100), "/health took \(healthTime)")
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }
}
