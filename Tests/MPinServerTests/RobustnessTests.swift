import Foundation
import MPinCrypto
import MPinServer
import MPinWire
import XCTest

/// Concurrency of the wrong-PIN counter and bad input on every endpoint.
class RobustnessTests: XCTestCase {
    /// The database the tests run on (`PostgresStorageTests.swift` runs them on PostgreSQL).
    class var storage: TestStorage { .sqlite }

    /// Prepares `n` pass-2 results with a wrong PIN (sequentially: one pass-1 per identity).
    private func wrongAttempts(_ client: MPinTestClient, _ n: Int) async throws -> [Pass2Response] {
        let permit = try await client.timePermit()!
        var out: [Pass2Response] = []
        for i in 0..<n { out.append(try await client.passes(pin: String(5000 + i), permit: permit).0) }
        return out
    }

    private func finalStatuses(_ http: HTTPClient, _ results: [Pass2Response]) async throws -> [Int] {
        try await withThrowingTaskGroup(of: Int.self) { group in
            for r in results {
                group.addTask { try await http.post("/mpinAuthenticate", AuthenticateRequest(mpinResponse: MPinResponse(r))).status }
            }
            var statuses: [Int] = []
            for try await s in group { statuses.append(s) }
            return statuses
        }
    }

    func testFiftyParallelWrongPINsBlockExactlyOnce() async throws {
        let server = try await TestServer(storage: Self.storage)
        try await server.start()
        do {
            var h = MPinTestClient(http: server.client)
            try await h.registerFully("henry", pin: "1234")
            let statuses = try await finalStatuses(server.client, try await wrongAttempts(h, 50))
            XCTAssertEqual(statuses.count, 50)
            // Counts 1 and 2 answer 401; the third blocks; every later attempt sees the block.
            XCTAssertEqual(statuses.filter { $0 == 401 }.count, 2)
            XCTAssertEqual(statuses.filter { $0 == 410 }.count, 48)
            let summary = try await server.user("henry")
            XCTAssertEqual(summary?.failedAttempts, 3)
            XCTAssertEqual(summary?.blocked, true)
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    func testParallelWrongPINsLoseNoIncrement() async throws {
        let server = try await TestServer(storage: Self.storage) { $0.maxInvalidLoginAttempts = 1000 }
        try await server.start()
        do {
            var h = MPinTestClient(http: server.client)
            try await h.registerFully("ivy", pin: "1234")
            let statuses = try await finalStatuses(server.client, try await wrongAttempts(h, 50))
            XCTAssertEqual(statuses, [Int](repeating: 401, count: 50))
            let ivy = try await server.user("ivy")
            XCTAssertEqual(ivy?.failedAttempts, 50)
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    func testParallelLoginsOfDifferentIdentitiesAllSucceed() async throws {
        let server = try await TestServer(storage: Self.storage)
        try await server.start()
        do {
            var clients: [MPinTestClient] = []
            for i in 0..<200 {
                var c = MPinTestClient(http: server.client)
                try await c.registerFully("user\(i)", pin: String(1000 + i))
                clients.append(c)
            }
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for (i, c) in clients.enumerated() {
                    group.addTask { try await c.authenticate(pin: String(1000 + i)) }
                }
                var s: [Int] = []
                for try await x in group { s.append(x) }
                return s
            }
            XCTAssertEqual(statuses, [Int](repeating: 200, count: 200))
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    func testBadInputGets4xxJSONAndServerKeepsServing() async throws {
        let server = try await TestServer(storage: Self.storage) { $0.maxBodyBytes = 4096 }
        try await server.start()
        do {
            let http = server.client!
            var j = MPinTestClient(http: http)
            try await j.registerFully("judy", pin: "1234")
            let id = j.mpinIDHex
            var pendingClient = MPinTestClient(http: http)
            let pending = try await pendingClient.register("judy-pending").mpinId
            // A valid-looking G1 encoding that is not on the curve.
            let offCurve = "04" + String(repeating: "11", count: 64)
            let g1 = "04" + String(repeating: "0", count: 128)
            let cases: [(String, String, String?)] = [
                ("PUT", "/rps/user", "{"),
                ("PUT", "/rps/user", "[]"),
                ("PUT", "/rps/user", #"{"mobile":1}"#),
                ("PUT", "/rps/user", #"{"userId":5}"#),
                ("PUT", "/rps/user", #"{"userId":""}"#),
                ("PUT", "/rps/user/zz", #"{"userId":"a"}"#),
                ("PUT", "/rps/user/\(pending)", #"{"userId":"judy","regOTT":"00"}"#),
                ("GET", "/rps/signature/xyz?regOTT=00", nil),
                ("GET", "/rps/signature/\(id)", nil),
                ("GET", "/rps/signature/\(id)?regOTT=%zz", nil),
                ("GET", "/rps/timePermit/nothex", nil),
                ("GET", "/rps/timePermit/abcd", nil),
                ("POST", "/rps/pass1", "not json"),
                ("POST", "/rps/pass1", #"{"mpin_id":"\#(id)","U":"\#(g1)"}"#),
                ("POST", "/rps/pass1", #"{"mpin_id":"\#(id)","U":"zz","UT":"\#(g1)"}"#),
                ("POST", "/rps/pass1", #"{"mpin_id":"\#(id)","U":"\#(offCurve)","UT":"\#(offCurve)"}"#),
                ("POST", "/rps/pass1", #"{"mpin_id":"q","U":"\#(offCurve)","UT":"\#(offCurve)"}"#),
                ("POST", "/rps/pass1", #"{"mpin_id":1,"U":2,"UT":3}"#),
                ("POST", "/rps/pass2", #"{"mpin_id":"\#(id)","V":"\#(offCurve)","WID":"0","OTP":false}"#),
                ("POST", "/rps/pass2", #"{"mpin_id":"\#(id)","V":"04","WID":"0","OTP":false}"#),
                ("POST", "/rps/pass2", #"{"mpin_id":"\#(id)","V":"\#(offCurve)","WID":0}"#),
                ("POST", "/rps/pass2", #"{"mpin_id":"\#(id)","V":"\#(offCurve)","WID":"0","OTP":"yes"}"#),
                ("POST", "/rps/pass2", "{}"),
                ("POST", "/rps/authenticate", "{}"),
                ("POST", "/rps/authenticate", #"{"mpinResponse":{}}"#),
                ("POST", "/rps/authenticate", #"{"mpinResponse":{"authOTT":"zz"}}"#),
                ("POST", "/rps/authenticate", #"{"mpinResponse":{"authOTT":"00112233445566778899aabbccddeeff"}}"#),
                ("POST", "/mpinAuthenticate", #"{"mpinResponse":{}}"#),
                ("POST", "/mpinAuthenticate", "nope"),
                ("POST", "/mpinAuthenticate", #"{"mpinResponse":{"authOTT":"00112233445566778899aabbccddeeff"}}"#),
                ("POST", "/authenticate", #"{"authOTT":7}"#),
                ("POST", "/authenticate", #"{"authOTT":"00112233445566778899aabbccddeeff"}"#),
                ("POST", "/rps/accessnumber", "{"),
                ("POST", "/rps/accessnumber", #"{"webOTT":"00"}"#),
                ("POST", "/rps/accessnumber", #"{"webOTT":"g"}"#),
                ("POST", "/logout", #"{"userId":"judy"}"#),
                ("POST", "/logout", #"{"userId":"judy","sessionToken":"00"}"#),
                ("POST", "/user/\(id)", "{"),
                ("POST", "/user/\(id)", #"{"activateKey":"00"}"#),
                ("GET", "/dta/clientSecret", nil),
                ("GET", "/dta/clientSecret?app_id=a&expires=2016-10-11T13%3A59%3A16Z&hash_mpin_id=00&hash_user_id=&signature=00", nil),
                ("GET", "/dta/clientSecret?app_id=a&expires=bad&hash_mpin_id=\(String(repeating: "0", count: 64))&hash_user_id=&signature=00", nil),
                ("GET", "/dta/clientSecret?app_id=a&expires=2016-10-11T13%3A59%3A16Z&hash_mpin_id=\(String(repeating: "0", count: 64))&hash_user_id=&signature=00", nil),
                ("GET", "/dta/clientSecret?app_id=a&expires=2099-10-11T13%3A59%3A16Z&hash_mpin_id=\(String(repeating: "0", count: 64))&hash_user_id=&signature=00", nil),
                ("GET", "/dta/timePermit?hash_mpin_id=00&signature=00", nil),
                ("GET", "/dta/timePermit?hash_mpin_id=\(String(repeating: "0", count: 64))&signature=00", nil),
                ("GET", "/dta/timePermit", nil),
                ("GET", "/dta/serverSecret?expires=2099-10-11T13%3A59%3A16Z&signature=00", nil),
                ("GET", "/rps/pass1", nil),
                ("DELETE", "/rps/user", nil),
                ("GET", "/no/such/path", nil),
                ("GET", "/rps/timePermitsStorage/app/17085/\(String(repeating: "0", count: 64))", nil),
                ("POST", "/rps/pass1", String(repeating: "x", count: 10_000)),
            ]
            for (method, path, body) in cases {
                let r = try await http.send(method, path, body: body.map { Data($0.utf8) })
                let label = "\(method) \(path) \(body?.prefix(60) ?? "")"
                XCTAssertTrue((400..<500).contains(r.status), "\(label) → \(r.status)")
                XCTAssertNotNil(r.object?["message"]?.string, "\(label): body is not a JSON error")
                if r.status == 401 { XCTAssertEqual(r.headers["www-authenticate"], "Authenticate", label) }
            }
            // Still serving, and the identity still works (bad input counted no wrong PIN).
            let v1 = try await http.get("/status").status
            XCTAssertEqual(v1, 200)
            let v2 = try await j.authenticate(pin: "1234")
            XCTAssertEqual(v2, 200)
            let options = try await http.send("OPTIONS", "/rps/user")
            XCTAssertEqual(options.status, 200)
            XCTAssertEqual(options.headers["access-control-allow-origin"], "*")
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }

    func testExpiredAndTamperedSignaturesAreRejected() async throws {
        let server = try await TestServer(storage: Self.storage) { $0.signatureExpireSeconds = 1 }
        try await server.start()
        do {
            var k = MPinTestClient(http: server.client)
            _ = try await k.register("kate")
            let sig = try await server.client.get("/rps/signature/\(k.mpinIDHex)?regOTT=\(k.regOTT)").decode(SignatureResponse.self)
            try await Task.sleep(nanoseconds: 2_100_000_000)
            let v3 = try await server.client.get("/dta/clientSecret?" + sig.params).status
            XCTAssertEqual(v3, 408)
            // A tampered signature is refused with 401.
            let tampered = sig.params.replacingOccurrences(of: "signature=", with: "signature=0")
            let v4 = try await server.client.get("/dta/clientSecret?" + tampered).status
            XCTAssertEqual(v4, 401)
        } catch { await server.shutdown(); throw error }
        await server.shutdown()
    }
}
