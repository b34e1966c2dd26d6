import Foundation
import Logging
import MPinClient
import MPinCrypto
import MPinJSON
import MPinLinux
import MPinServer
import MPinTestSupport
import XCTest

/// The client core over the Linux platform (libcurl, file store) against mpin-server running
/// in this process on 127.0.0.1: registration, authentication, wrong PIN ×3 → BLOCKED, OTP,
/// and the access-number flow with a concurrent "browser".
final class ClientServerTests: XCTestCase {
    private var dataDir = "", storeDir = ""
    private var running: RunningServer?
    private var backend = ""

    override func setUp() async throws {
        let base = NSTemporaryDirectory() + "mpin-e2e-" + UUID().uuidString
        dataDir = base + "-server"
        storeDir = base + "-store"
        _ = try DataDirectory.initialise(path: dataDir, autoActivate: true)
        try FileManager.default.createDirectory(atPath: storeDir, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o700])
        var logger = Logger(label: "mpin-e2e")
        logger.logLevel = .critical
        let r = try await MPinServer(dataDirectory: dataDir, host: "127.0.0.1", port: 0, logger: logger).start()
        running = r
        backend = "http://127.0.0.1:\(r.port)"
    }

    override func tearDown() async throws {
        await running?.stop()
        try? FileManager.default.removeItem(atPath: dataDir)
        try? FileManager.default.removeItem(atPath: storeDir)
    }

    private var platform: LinuxPlatform { LinuxPlatform(storageDirectory: storeDir, requiredOwner: getuid()) }

    private func pin(_ s: String) -> [UInt8] { Array(s.utf8) }

    /// A fresh SDK over the store with the backend set, and a registered user with PIN 1234,
    /// handed back from the thread that registered it (neither is Sendable).
    private func registered(_ id: String) async -> (client: Handoff<(sdk: MPinSDK, user: MPinUser)>, codes: [MPinStatus.Code]) {
        let backend = self.backend, platform = self.platform
        return await blocking {
            let sdk = MPinSDK(context: platform)
            var codes = [sdk.initialize(config: ["backend": backend]).code]
            let user = sdk.makeNewUser(id: id, deviceName: "e2e")
            codes.append(sdk.startRegistration(user).code)
            codes.append(sdk.confirmRegistration(user).code)
            codes.append(sdk.finishRegistration(user, pin: SecretBytes(copying: "1234".utf8)).code)
            return (Handoff((sdk, user)), codes)
        }
    }

    func testRegisterAuthenticateAndBlock() async throws {
        let (client, codes) = await registered("alice@example.org")
        let user = client.value.user
        XCTAssertEqual(codes, [.ok, .ok, .ok, .ok])
        XCTAssertEqual(user.state, .registered)
        let results: [MPinStatus.Code] = await blocking {
            let (sdk, user) = client.value
            var r: [MPinStatus.Code] = []
            for p in ["1234", "1111", "1234", "2222", "3333", "4444"] {
                r.append(sdk.startAuthentication(user).code)
                r.append(sdk.finishAuthentication(user, pin: SecretBytes(copying: p.utf8)).status.code)
            }
            return r
        }
        // Right, wrong, right (resets the counter), then three wrong: blocked on the third.
        XCTAssertEqual(results, [.ok, .ok, .ok, .incorrectPIN, .ok, .ok, .ok, .incorrectPIN, .ok, .incorrectPIN,
                                 .ok, .incorrectPIN])
        XCTAssertEqual(user.state, .blocked)
        // A new SDK over the same store sees the block.
        let platform = self.platform
        let reloaded = await blocking { () -> MPinUserState? in
            let again = MPinSDK(context: platform)
            _ = again.initialize()
            return again.listAllUsers().1.first?.state
        }
        XCTAssertEqual(reloaded, .blocked)
    }

    func testOTP() async throws {
        let (client, codes) = await registered("otp@example.org")
        XCTAssertEqual(codes, [.ok, .ok, .ok, .ok])
        let (start, status, otp) = await blocking { () -> (MPinStatus.Code, MPinStatus.Code, MPinOTP) in
            let (sdk, user) = client.value
            let s = sdk.startAuthentication(user).code
            let (status, otp) = sdk.finishAuthenticationOTP(user, pin: SecretBytes(copying: "1234".utf8))
            return (s, status.code, otp)
        }
        XCTAssertEqual(start, .ok)
        XCTAssertEqual(status, .ok)
        XCTAssertEqual(otp.status.code, .ok)
        XCTAssertEqual(otp.otp.count, 6)
        XCTAssertTrue(otp.otp.allSatisfy(\.isNumber))
        XCTAssertEqual(otp.ttlSeconds, 60)
        XCTAssertEqual(otp.expireTime - otp.nowTime, 60)
    }

    func testAccessNumberWithBrowser() async throws {
        let (client, codes) = await registered("an@example.org")
        let sdk = client.value.sdk
        XCTAssertEqual(codes, [.ok, .ok, .ok, .ok])
        let backend = self.backend
        let browser = CurlHTTPTransport()
        @Sendable func post(_ path: String, _ body: String) -> (Int, JSONValue) {
            guard let r = try? browser.send(HTTPRequest(method: .post, url: backend + path, text: body)) else { return (0, .null) }
            return (r.status, (try? JSONParser().parse(r.body)) ?? .null)
        }
        let (status, session) = post("/rps/getAccessNumber", "")
        XCTAssertEqual(status, 200)
        let accessNumber = session["accessNumber"]?.stringValue ?? ""
        let webOTT = session["webOTT"]?.stringValue ?? ""
        XCTAssertEqual(sdk.checkAccessNumber(accessNumber).code, .ok)

        // The browser polls for the authOTT and completes the login at the RPA while the
        // mobile side waits in FinishAuthenticationAN.
        async let browserDone: Int = blocking {
            for _ in 0..<100 {
                let (s, v) = post("/rps/accessnumber", #"{"webOTT": "\#(webOTT)"}"#)
                if s == 200, let ott = v["authOTT"]?.stringValue, !ott.isEmpty {
                    return post("/mpinAuthenticate", #"{"mpinResponse": {"authOTT": "\#(ott)"}}"#).0
                }
                Thread.sleep(forTimeInterval: 0.1)
            }
            return 0
        }
        let mobile: (MPinStatus.Code, MPinStatus.Code, Bool, Bool) = await blocking {
            let (sdk, user) = client.value
            let s = sdk.startAuthentication(user).code
            let f = sdk.finishAuthenticationAN(user, pin: SecretBytes(copying: "1234".utf8), accessNumber: accessNumber).code
            let can = sdk.canLogout(user)
            return (s, f, can, can && sdk.logout(user))
        }
        let browserStatus = await browserDone
        XCTAssertEqual(browserStatus, 200, "the browser's login at the RPA")
        XCTAssertEqual(mobile.0, .ok)
        XCTAssertEqual(mobile.1, .ok, "FinishAuthenticationAN")
        XCTAssertTrue(mobile.2, "logout data kept")
        XCTAssertTrue(mobile.3, "logout accepted")

        // A wrong access number: pass 2 still answers 200; the final step says 412.
        let wrong: MPinStatus.Code = await blocking {
            let (sdk, user) = client.value
            _ = sdk.startAuthentication(user)
            return sdk.finishAuthenticationAN(user, pin: SecretBytes(copying: "1234".utf8), accessNumber: "1234567").code
        }
        XCTAssertEqual(wrong, .incorrectAccessNumber)
    }
}


extension ClientServerTests {
    /// §4.2 step 1: the second D-TA's share is cached on the device for its day, in its own
    /// value; the next login of the day asks the RPS only, and a stale or damaged cache is
    /// refetched. DeleteUser removes it.
    func testSecondTimePermitShareIsCachedForItsDay() async throws {
        let (_, codes) = await registered("carol@example.org")
        XCTAssertEqual(codes, [.ok, .ok, .ok, .ok])
        let platform = self.platform, backend = self.backend
        let counter = RecordingTransport(base: platform.transport)
        let context = TestContext(transport: counter, secureStorage: platform.secureStorage,
                                  nonSecureStorage: platform.nonSecureStorage)
        let login: @Sendable (String) -> [MPinStatus.Code] = { pin in
            let sdk = MPinSDK(context: context)
            _ = sdk.initialize(config: ["backend": backend])
            guard let user = sdk.listUsers().1.first else { return [] }
            return [sdk.startAuthentication(user).code, sdk.finishAuthentication(user, pin: SecretBytes(copying: pin.utf8)).status.code]
        }
        let run: @Sendable () -> [MPinStatus.Code] = { login("1234") }
        let cached = { () throws -> [String] in
            try FileManager.default.contentsOfDirectory(atPath: self.storeDir).filter { $0.hasPrefix("state-permit-") }
        }
        let first = await blocking(run)
        XCTAssertEqual(first, [.ok, .ok])
        XCTAssertEqual(counter.count(containing: "/dta/timePermit"), 1)
        XCTAssertEqual(counter.count(containing: "/rps/timePermit/"), 1)
        let names = try cached()
        XCTAssertEqual(names.count, 1, "cached after a successful login")

        let second = await blocking(run)
        XCTAssertEqual(second, [.ok, .ok])
        XCTAssertEqual(counter.count(containing: "/dta/timePermit"), 1, "the cached share is used")
        XCTAssertEqual(counter.count(containing: "/rps/timePermit/"), 2, "the RPS share is fetched every time")

        // A failed login with the cached share forgets it (it might be the cause); the next
        // login fetches it again and caches it once it has worked.
        let wrong = await blocking { login("9999") }
        XCTAssertEqual(wrong, [.ok, .incorrectPIN])
        XCTAssertEqual(try cached(), [])
        let wrongAgain = await blocking { login("9999") }
        XCTAssertEqual(wrongAgain, [.ok, .incorrectPIN])
        XCTAssertEqual(counter.count(containing: "/dta/timePermit"), 2)
        XCTAssertEqual(try cached(), [], "a share is not cached by a failed login")
        let right = await blocking(run)
        XCTAssertEqual(right, [.ok, .ok])
        XCTAssertEqual(counter.count(containing: "/dta/timePermit"), 3)
        XCTAssertEqual(try cached(), names)

        // Yesterday's share (or a damaged value) is not used: fetched and cached again.
        let name = String(names[0].dropFirst("state-".count))
        try platform.nonSecureStorage.write(name, Array(#"{"date": 1, "timePermit": "04ab"}"#.utf8))
        let stale = await blocking(run)
        XCTAssertEqual(stale, [.ok, .ok])
        XCTAssertEqual(counter.count(containing: "/dta/timePermit"), 4)
        try platform.nonSecureStorage.write(name, Array("not json".utf8))
        let damaged = await blocking(run)
        XCTAssertEqual(damaged, [.ok, .ok])
        XCTAssertEqual(counter.count(containing: "/dta/timePermit"), 5)

        let deleted: MPinStatus.Code = await blocking {
            let sdk = MPinSDK(context: context)
            _ = sdk.initialize(config: ["backend": backend])
            guard let user = sdk.listUsers().1.first else { return .flowError }
            return sdk.deleteUser(user).code
        }
        XCTAssertEqual(deleted, .ok)
        XCTAssertNil(try platform.nonSecureStorage.read(name))
    }
}

/// Runs blocking client calls on their own thread so that the server's tasks keep the
/// cooperative pool.
private func blocking<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { c in Thread.detachNewThread { c.resume(returning: body()) } }
}
