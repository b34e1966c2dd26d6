import MPinClient
import MPinCrypto
import MPinJSON
import MPinReferenceData
import MPinTestSupport
import XCTest

/// Runs the recorded flows of the original SDK's unit tests against the recorded server
/// answers and checks that the core reaches the statuses the original SDK reached.
final class ReplayTests: XCTestCase {
    private var recording: [Exchange] = []
    private let backend = "http://10.10.40.62:8005"

    override func setUpWithError() throws { recording = try Fixtures.recording(ReferenceData.data("fixtures/recorded-http.json")) }

    /// The SDK's exchanges of one recorded test (the browser's requests of the access-number
    /// tests are the test harness's, not the SDK's, and are left out).
    private func exchanges(_ test: String) -> [Exchange] {
        recording.filter { $0.context.hasSuffix("@" + test) && !($0.context.hasPrefix("@") && test.hasPrefix("testAuthenticateAN")) }
    }

    private func makeSDK(_ tests: [String]) -> (MPinSDK, ReplayTransport, MemoryStorage, MemoryStorage) {
        let transport = ReplayTransport(tests.flatMap(exchanges))
        let secure = MemoryStorage(), plain = MemoryStorage()
        return (MPinSDK(context: TestContext(transport: transport, secureStorage: secure, nonSecureStorage: plain)),
                transport, secure, plain)
    }

    private func assertReplayed(_ t: ReplayTransport, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(t.mismatches, [], "requests differ from the recording", file: file, line: line)
        XCTAssertEqual(t.remaining.map { "\($0.method) \($0.url)" }, [], "recorded requests not made", file: file, line: line)
    }

    private func pin(_ s: String) -> SecretBytes { SecretBytes(copying: s.utf8) }

    /// Init with a backend, then register a user with PIN 1234.
    private func registered(_ sdk: MPinSDK, _ id: String = "testUser") throws -> MPinUser {
        XCTAssertEqual(sdk.initialize(config: ["backend": backend]).code, .ok)
        let user = sdk.makeNewUser(id: id)
        XCTAssertEqual(sdk.startRegistration(user).code, .ok)
        XCTAssertEqual(user.state, .activated, "the recorded server force-activates")
        XCTAssertEqual(sdk.confirmRegistration(user).code, .ok)
        XCTAssertEqual(sdk.finishRegistration(user, pin: pin("1234")).code, .ok)
        XCTAssertEqual(user.state, .registered)
        return user
    }

    func testInitTestBackendAndSetBackend() throws {
        let (sdk, t, _, _) = makeSDK(["testInit", "testBackend", "setBackend"])
        XCTAssertEqual(sdk.initialize(config: ["backend": backend]).code, .ok)
        XCTAssertEqual(sdk.clientParam("accessNumberDigits"), "7")
        XCTAssertEqual(sdk.clientParam("registerURL"), backend + "/rps/user", "relative URLs are resolved")
        XCTAssertEqual(sdk.testBackend("https://m-pindemo.certivox.org").code, .ok)
        XCTAssertEqual(sdk.testBackend("https://blabla.certivox.org").code, .networkError)
        XCTAssertEqual(sdk.setBackend("https://blabla.certivox.org").code, .networkError)
        XCTAssertEqual(sdk.clientParam("registerURL"), backend + "/rps/user", "a failed setBackend keeps the old one")
        XCTAssertEqual(sdk.setBackend(backend + "/").code, .ok)
        assertReplayed(t)
    }

    func testRegistration() throws {
        let (sdk, t, secure, plain) = makeSDK(["testInit", "testRegister1"])
        let user = try registered(sdk)
        XCTAssertTrue(secure.text("tokens").contains("\"token\""), "the token is in secure storage")
        XCTAssertFalse(secure.text("tokens").contains("regOTT"), "the regOTT is dropped once registered")
        XCTAssertTrue(plain.text("users").contains("REGISTERED"))
        XCTAssertFalse(plain.text("users").contains("token"), "no secret in non-secure storage")
        XCTAssertEqual(sdk.listUsers().1.map(\.id), ["testUser"])
        XCTAssertEqual(sdk.listBackends().1, ["10.10.40.62:8005"])
        // A second SDK over the same storage sees the registered user.
        let again = MPinSDK(context: TestContext(transport: ReplayTransport([]), secureStorage: secure, nonSecureStorage: plain))
        XCTAssertEqual(again.initialize().code, .ok)
        XCTAssertEqual(again.listAllUsers().1.first?.state, .registered)
        XCTAssertEqual(again.listAllUsers().1.first?.mpinIdHex, user.mpinIdHex)
        assertReplayed(t)
    }

    /// FinishRegistration writes the token first; if the user list's write is lost, the next
    /// start must see a registered user, not refuse the whole store.
    func testLostUserListWriteAfterFinishRegistration() throws {
        let (sdk, _, secure, plain) = makeSDK(["testInit", "testRegister1"])
        let user = try registered(sdk)
        let list = plain.text("users").replacingOccurrences(of: "REGISTERED", with: "ACTIVATED")
        try plain.write("users", Array(list.utf8))
        let again = MPinSDK(context: TestContext(transport: ReplayTransport([]), secureStorage: secure, nonSecureStorage: plain))
        XCTAssertEqual(again.initialize().code, .ok)
        XCTAssertEqual(again.listAllUsers().1.first?.state, .registered)
        XCTAssertEqual(again.listAllUsers().1.first?.mpinIdHex, user.mpinIdHex)
        // A registering user with neither regOTT nor token is still a storage error.
        try secure.write("tokens", Array("{}".utf8))
        let broken = MPinSDK(context: TestContext(transport: ReplayTransport([]), secureStorage: secure, nonSecureStorage: plain))
        XCTAssertEqual(broken.initialize().code, .storageError)
    }

    func testRegistrationErrors() throws {
        let (sdk, t, _, _) = makeSDK(["testInit", "testRegister2", "testRegister3"])
        XCTAssertEqual(sdk.initialize(config: ["backend": backend]).code, .ok)
        let user = sdk.makeNewUser(id: "testUser")
        XCTAssertEqual(sdk.startRegistration(user).code, .ok)
        XCTAssertEqual(sdk.restartRegistration(user).code, .flowError, "an ACTIVATED user cannot restart")
        XCTAssertEqual(sdk.finishRegistration(user, pin: pin("1234")).code, .flowError, "no shares yet")
        XCTAssertEqual(sdk.startRegistration(user).code, .flowError, "already registering")
        let empty = sdk.makeNewUser(id: "")
        XCTAssertEqual(sdk.startRegistration(empty).code, .httpRequestError, "recorded 400 for an empty id")
        XCTAssertEqual(empty.state, .invalid)
        XCTAssertEqual(sdk.listUsers().1.count, 1)
        assertReplayed(t)
    }

    func testAuthenticationRightAndWrongPIN() throws {
        let (sdk, t, _, plain) = makeSDK(["testInit", "testAuthenticate1", "testAuthenticate1SecondAuth"])
        let user = try registered(sdk)
        XCTAssertEqual(sdk.startAuthentication(user).code, .ok)
        let writes = plain.writes
        let first = sdk.finishAuthentication(user, pin: pin("1234"))
        XCTAssertEqual(first.status.code, .ok)
        XCTAssertTrue(first.authResultData.contains("someUserData"))
        // The first login of the day caches the second time-permit share (its own value, the
        // user list untouched); later logins write nothing.
        XCTAssertEqual(plain.writes, writes + 1)
        let cache = try XCTUnwrap(plain.names.first { $0.hasPrefix("permit-") })
        XCTAssertTrue(plain.text(cache).contains("\"timePermit\""), plain.text(cache))
        let users = plain.text("users")
        XCTAssertEqual(sdk.finishAuthentication(user, pin: pin("1234")).status.code, .ok)
        XCTAssertEqual(plain.writes, writes + 1, "a later successful login writes nothing")
        XCTAssertEqual(plain.text("users"), users)
        XCTAssertEqual(sdk.finishAuthentication(user, pin: pin("1235")).status.code, .incorrectPIN)
        XCTAssertEqual(user.state, .registered)
        XCTAssertEqual(sdk.finishAuthentication(user, pin: pin("1234")).status.code, .ok)
        assertReplayed(t)
    }

    func testThreeWrongPINsBlock() throws {
        let (sdk, t, secure, plain) = makeSDK(["testInit", "testAuthenticate2"])
        let user = try registered(sdk)
        XCTAssertEqual(sdk.startAuthentication(user).code, .ok)
        XCTAssertEqual(sdk.finishAuthentication(user, pin: pin("1111")).status.code, .incorrectPIN)
        XCTAssertEqual(sdk.finishAuthentication(user, pin: pin("1112")).status.code, .incorrectPIN)
        XCTAssertEqual(user.state, .registered)
        XCTAssertEqual(sdk.finishAuthentication(user, pin: pin("1113")).status.code, .incorrectPIN)
        XCTAssertEqual(user.state, .blocked)
        XCTAssertTrue(plain.text("users").contains("BLOCKED"), "the block is persisted")
        XCTAssertFalse(secure.text("tokens").contains(user.mpinIdHex), "the token is deleted")
        XCTAssertEqual(sdk.startAuthentication(user).code, .flowError)
        assertReplayed(t)
    }

    func testOTP() throws {
        let (sdk, t, _, _) = makeSDK(["testInit", "testAuthenticateOTP"])
        let user = try registered(sdk)
        XCTAssertEqual(sdk.startAuthentication(user).code, .ok)
        let (status, otp) = sdk.finishAuthenticationOTP(user, pin: pin("1234"))
        XCTAssertEqual(status.code, .ok)
        XCTAssertEqual(otp.otp, "612614")
        XCTAssertEqual(otp.status.code, .responseParseError, "the recorded RPA returned no OTP lifetime")
        assertReplayed(t)
    }

    func testAccessNumberAndLogout() throws {
        let (sdk, t, _, _) = makeSDK(["testInit", "testAuthenticateAN1"])
        let user = try registered(sdk)
        XCTAssertEqual(sdk.checkAccessNumber("4241703").code, .ok)
        XCTAssertEqual(sdk.checkAccessNumber("6419791").code, .incorrectAccessNumber)
        XCTAssertEqual(sdk.checkAccessNumber("").code, .incorrectAccessNumber)
        XCTAssertEqual(sdk.startAuthentication(user).code, .ok)
        XCTAssertEqual(sdk.finishAuthenticationAN(user, pin: pin("1234"), accessNumber: "4241703").code, .ok)
        XCTAssertTrue(sdk.canLogout(user))
        XCTAssertTrue(sdk.logout(user))
        XCTAssertFalse(sdk.canLogout(user))
        assertReplayed(t)
    }

    func testWrongAccessNumber() throws {
        let (sdk, t, _, _) = makeSDK(["testInit", "testAuthenticateAN2"])
        let user = try registered(sdk)
        XCTAssertEqual(sdk.startAuthentication(user).code, .ok)
        XCTAssertEqual(sdk.finishAuthenticationAN(user, pin: pin("1234"), accessNumber: "6419791").code, .incorrectAccessNumber)
        XCTAssertEqual(sdk.finishAuthenticationAN(user, pin: pin("1233"), accessNumber: "6419791").code, .incorrectAccessNumber)
        let rest = t.remaining
        // Whatever the recording holds after these, play it through: the SDK's status must be
        // what the recorded final answer means (§7: 200 OK, 401 wrong PIN, 412 wrong access number).
        var played = 0
        for exchange in rest where exchange.url.hasSuffix("/rps/pass1") {
            let an = exchange.context.split(separator: "@")[0].split(separator: "-").last.map(String.init) ?? ""
            let pinText = exchange.context.split(separator: "-")[1]
            let status = sdk.finishAuthenticationAN(user, pin: SecretBytes(copying: pinText.utf8), accessNumber: an)
            let final = rest.last { $0.context == exchange.context && !$0.url.hasSuffix("pass1") && !$0.url.hasSuffix("pass2") }
            let expected: [Int: MPinStatus.Code] = [200: .ok, 401: .incorrectPIN, 412: .incorrectAccessNumber]
            let code = try XCTUnwrap(final.flatMap { expected[$0.status] }, "unexpected recorded answer \(String(describing: final?.status))")
            XCTAssertEqual(status.code, code, exchange.context)
            played += 1
        }
        XCTAssertGreaterThan(played, 0, "the recording has further access-number logins to play")
        assertReplayed(t)
    }
}
