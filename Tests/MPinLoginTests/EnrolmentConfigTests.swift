import MPinClient
import MPinCrypto
import MPinLogin
import MPinTestSupport
import MPinWire
import XCTest

/// The self-enrolment settings (pam_mpin(8), OPTIONS): which identity a Unix user enrols as, and
/// when a configuration may enrol anyone at all (the whole flow runs against a real server in
/// Tests/Integration/enrol-tests.sh).
final class EnrolmentConfigTests: XCTestCase {
    /// A verdict key as `mpin-server verdict-key` prints it (a G1 point).
    private let key = Hex.encode(try! Schnorr.generateKeyPair().publicKey)

    func testKeysAndModuleArguments() throws {
        let c = try LoginConfig.parse("""
            backend = http://127.0.0.1:8005
            enrol = yes
            enrol_identity = %u@example.org
            verdict_key = \(key.uppercased())
            """, file: "t.conf")
        XCTAssertTrue(c.enrol)
        XCTAssertEqual(c.enrolIdentity, "%u@example.org")
        XCTAssertEqual(c.verdictKey, key, "kept in lower case")
        XCTAssertFalse(LoginConfig().enrol, "off unless asked for")

        for (line, why) in [("enrol = maybe", "yes or no"), ("enrol_identity = example.org", "must contain %u"),
                            ("enrol_identity = %u\u{7}", "must contain %u"), ("verdict_key = 04abcd", "130 hex digits")] {
            XCTAssertThrowsError(try LoginConfig.parse(line, file: "t.conf"), line) { error in
                XCTAssertTrue("\(error)".contains(why), "\(line): \(error)")
            }
        }
        let options = ModuleOptions(arguments: ["enrol", "enrol_identity=%u@corp", "verdict_key=\(key)"])
        XCTAssertTrue(options.unknown.isEmpty, "\(options.unknown)")
        let fromLine = try options.loadConfig { _ in "backend = http://127.0.0.1:8005\n" }
        XCTAssertTrue(fromLine.enrol)
        XCTAssertEqual(fromLine.enrolIdentity, "%u@corp")
        XCTAssertEqual(fromLine.verdictKey, key)
    }

    func testIdentityAndRefusals() throws {
        let platform = TestContext(transport: ScriptedTransport { _ throws(HTTPTransportError) in throw .hostNotFound(host: "unused") },
                                   secureStorage: MemoryStorage(), nonSecureStorage: MemoryStorage())
        var config = LoginConfig()
        config.enrolIdentity = "%u@example.org (%u)"
        XCTAssertEqual(Enrolment(config: config, platform: platform).identity(for: "alice"), "alice@example.org (alice)")

        XCTAssertEqual(Enrolment(config: config, platform: platform).refusal, "enrol is not set")
        config.enrol = true
        XCTAssertEqual(Enrolment(config: config, platform: platform).refusal, "no backend in mpin.conf to enrol with")
        config.backend = "http://127.0.0.1:8005"
        config.backends = [config.backend]
        XCTAssertTrue(Enrolment(config: config, platform: platform).refusal?.contains("needs verdict_key") == true,
                      "plain http without a verdict key: any server on the port could enrol the user")
        config.backend = "https://mpin.example.org"
        config.backends = [config.backend]
        XCTAssertNotNil(Enrolment(config: config, platform: platform).refusal, "https with the system's CAs is not enough")
        config.caFile = "/etc/mpin/ca.pem"
        XCTAssertNil(Enrolment(config: config, platform: platform).refusal, "https with a pinned CA")
        config.backend = "http://127.0.0.1:8005"
        config.backends = [config.backend]
        config.caFile = ""
        config.verdictKey = key
        XCTAssertNil(Enrolment(config: config, platform: platform).refusal, "http with the server's verdict key")

        // Asked nothing, sent nothing, when refused; and a malformed code is not sent.
        config.verdictKey = ""
        var asked = false
        let refused = Enrolment(config: config, platform: platform).run(
            unixUser: "alice", askCode: { asked = true; return SecretBytes(copying: "123456789012".utf8) },
            askNewPIN: { .canceled }, login: { _ in .success })
        XCTAssertFalse(asked)
        guard case .notAllowed = refused.outcome else { return XCTFail("\(refused.outcome)") }
        config.verdictKey = key
        let malformed = Enrolment(config: config, platform: platform).run(
            unixUser: "alice", askCode: { SecretBytes(copying: "12345".utf8) }, askNewPIN: { .canceled }, login: { _ in .success })
        XCTAssertEqual(malformed.outcome, .codeRefused)
        XCTAssertNil(malformed.login)
    }
}
