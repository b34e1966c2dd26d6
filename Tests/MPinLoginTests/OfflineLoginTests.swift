import MPinClient
import MPinCrypto
import MPinLogin
import MPinTestSupport
import MPinWire
import XCTest

/// Offline logins' settings, key derivation and, above all, when a login may go offline at all
/// (never after an answer). The TPM itself is exercised against swtpm in
/// Tests/Integration/offline-tests.sh.
final class OfflineLoginTests: XCTestCase {
    func testKeysAndModuleArguments() throws {
        let defaults = LoginConfig()
        XCTAssertFalse(defaults.offline, "off unless asked for")
        XCTAssertEqual(defaults.offlineMaxAge, 7 * 86_400)
        XCTAssertEqual(defaults.offlineAttempts, 3)
        XCTAssertEqual(defaults.tpm, "device:/dev/tpmrm0")

        let c = try LoginConfig.parse("""
            offline = yes
            offline_max_age = 36h
            offline_attempts = 5
            tpm = swtpm:host=127.0.0.1,port=2321
            """, file: "t.conf")
        XCTAssertTrue(c.offline)
        XCTAssertEqual(c.offlineMaxAge, 36 * 3600)
        XCTAssertEqual(c.offlineAttempts, 5)
        XCTAssertEqual(c.tpm, "swtpm:host=127.0.0.1,port=2321")
        for (text, seconds) in [("90", 90), ("90s", 90), ("15m", 900), ("2d", 172_800)] as [(String, Int64)] {
            XCTAssertEqual(try LoginConfig.parse("offline_max_age = \(text)", file: "t").offlineMaxAge, seconds, text)
        }
        for (line, why) in [("offline = maybe", "yes or no"), ("offline_max_age = 0", "duration"),
                            ("offline_max_age = 400d", "duration"), ("offline_max_age = 7w", "duration"),
                            ("offline_max_age = -5", "duration"), ("offline_attempts = 0", "1 to 100"),
                            ("tpm = device:/dev/tpm rm0", "TCTI"), ("tpm = ", "TCTI")] {
            XCTAssertThrowsError(try LoginConfig.parse(line, file: "t.conf"), line) { error in
                XCTAssertTrue("\(error)".contains(why), "\(line): \(error)")
            }
        }
        let options = ModuleOptions(arguments: ["offline", "offline_max_age=1d", "offline_attempts=2", "tpm=swtpm:port=1"])
        XCTAssertTrue(options.unknown.isEmpty, "\(options.unknown)")
        let fromLine = try options.loadConfig { _ in "backend = http://127.0.0.1:8005\n" }
        XCTAssertTrue(fromLine.offline)
        XCTAssertEqual(fromLine.offlineMaxAge, 86_400)
        XCTAssertEqual(fromLine.offlineAttempts, 2)
        XCTAssertEqual(fromLine.tpm, "swtpm:port=1")
    }

    /// PBKDF2-HMAC-SHA-256 against the published vectors (RFC 7914 §11 and the widely used
    /// "password"/"salt" ones), so the authorisation value is the function the docs name.
    func testPBKDF2Vectors() throws {
        func derive(_ password: String, _ salt: String, _ c: Int) throws -> String {
            try Array(password.utf8).withUnsafeBytes { Hex.encode(try OfflineKey.pbkdf2(password: $0, salt: Array(salt.utf8), iterations: c)) }
        }
        XCTAssertEqual(try derive("password", "salt", 1), "120fb6cffcf8b32c43e7225256c4f837a86548c92ccc35480805987cb70be17b")
        XCTAssertEqual(try derive("password", "salt", 2), "ae4d0c95af6b46d32d0adff928f06dd02a303f8ef3c251dfd6e2d85a95474c43")
        XCTAssertEqual(try derive("password", "salt", 4096), "c5e478d59288c841aa530db6845c4c8d962893a001ce4e11a4963873aa98134a")
        // RFC 4231 test case 2 (HMAC-SHA-256, key "Jefe").
        let key = SecretBytes(copying: Array("Jefe".utf8))
        XCTAssertEqual(Hex.encode(try OfflineKey.mac(key: key, Array("what do ya want for nothing?".utf8))),
                       "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    /// The value differs with the identity and the salt: two users with one PIN, or one user's
    /// two records, share nothing.
    func testAuthorisationDependsOnIdentityAndSalt() throws {
        let pin = SecretBytes(copying: Array("1234".utf8))
        let salt = [UInt8](repeating: 1, count: 16)
        func value(_ identity: String, _ salt: [UInt8]) throws -> String {
            try OfflineKey.authorisation(pin: pin, identity: identity, salt: salt, iterations: 10).withUnsafeBytes { Hex.encode($0) }
        }
        XCTAssertEqual(try value("alice@example.org", salt), try value("alice@example.org", salt))
        XCTAssertNotEqual(try value("alice@example.org", salt), try value("bob@example.org", salt))
        XCTAssertNotEqual(try value("alice@example.org", salt), try value("alice@example.org", [UInt8](repeating: 2, count: 16)))
    }

    /// Whoever answers on the backend's address decides nothing offline: only a node that
    /// never answered, for a reason of the network, leads to the offline check. Here no TPM
    /// answers either, so the check itself ends at "no offline record"; what matters is whether
    /// it was reached.
    func testOnlyAnUnreachableBackendLeadsOffline() throws {
        let cases: [(String, @Sendable (HTTPRequest) throws(HTTPTransportError) -> HTTPResponse, Bool)] = [
            ("refused", { (r) throws(HTTPTransportError) in throw .connectionRefused(host: "mpin.test") }, true),
            ("timed out", { (r) throws(HTTPTransportError) in throw .timedOut(host: "mpin.test", seconds: 1) }, true),
            ("no name", { (r) throws(HTTPTransportError) in throw .hostNotFound(host: "mpin.test") }, true),
            ("no route", { (r) throws(HTTPTransportError) in throw .connectionFailed(host: "mpin.test", detail: "no route to host") }, true),
            ("TLS failure", { (r) throws(HTTPTransportError) in throw .tlsFailure(host: "mpin.test", detail: "bad certificate") }, false),
            ("too large", { (r) throws(HTTPTransportError) in throw .responseTooLarge(limit: 1) }, false),
            ("server error", { (r) throws(HTTPTransportError) in HTTPResponse(status: 500) }, false),
            ("unavailable", { (r) throws(HTTPTransportError) in HTTPResponse(status: 503) }, false),
        ]
        for (name, answer, offline) in cases {
            let h = try LoginHarness()
            try h.register()
            h.config.offline = true
            h.config.tpm = "swtpm:host=127.0.0.1,port=1"
            h.network = Answering(answer)
            let login = OfflineLogins(config: h.config, storage: h.plain)
            var l = Login(config: h.config, platform: h.platform)
            l.offline = login
            let (outcome, _) = l.run(unixUser: "alice") { SecretBytes(copying: Array("1234".utf8)) }
            guard case .unavailable(let why) = outcome else {
                XCTFail("\(name): \(outcome)")
                continue
            }
            XCTAssertEqual(why.hasPrefix("offline:"), offline, "\(name): \(why)")
        }
    }

    /// The offline logins the host recorded become the report of the next online login
    /// (docs/PROTOCOL.md §4.5.2): every one, in order, with names made to fit the report's
    /// alphabet (a service outside it would make the report refused as a whole), the newest 50.
    func testRecordedOfflineLoginsBecomeAWellFormedReport() throws {
        let h = try LoginHarness()
        let offline = OfflineLogins(config: h.config, storage: h.plain)
        XCTAssertNil(offline.pendingReport(identity: "alice@example.org"), "nothing recorded")
        let name = "offline-" + Hex.encode(SHA256.hash(Array("alice@example.org".utf8)).prefix(16)) + "-state"
        try h.plain.write(name, Array("failures 1\nlogin 1790000000 sudo OK\nlogin 1790000100 su?l INCORRECT_PIN\n".utf8))
        var report = try XCTUnwrap(offline.pendingReport(identity: "alice@example.org"))
        XCTAssertEqual(report.logins.map { "\($0.time) \($0.service) \($0.outcome)" },
                       ["1790000000 sudo OK", "1790000100 su_l INCORRECT_PIN"])
        // Lines of a state written before logins had ids get stable ones, distinct per login.
        XCTAssertEqual(Set(report.logins.map(\.id)).count, 2)
        XCTAssertTrue(report.logins.allSatisfy { OfflineLoginReport.isID($0.id) })
        // An id is 8 bytes in lower-case hex, nothing else.
        for notAnID in ["0123456789ABCDEF", "0123456789abcde", "0123456789abcdef0", "0123456789abcdeg", ""] {
            XCTAssertFalse(OfflineLoginReport.isID(notAnID), notAnID)
        }
        XCTAssertTrue(OfflineLoginReport.isID("0123456789abcdef"))
        XCTAssertEqual(offline.pendingReport(identity: "alice@example.org")?.logins.map(\.id), report.logins.map(\.id))
        try h.plain.write(name, Array("failures 0\nlogin 1790000000 sudo OK 00000000000000aa\n".utf8))
        XCTAssertEqual(offline.pendingReport(identity: "alice@example.org")?.logins.first?.id, "00000000000000aa", "a kept id is sent")
        try h.plain.write(name, Array("failures 1\nlogin 1790000000 sudo OK\nlogin 1790000100 su?l INCORRECT_PIN\n".utf8))
        XCTAssertFalse(report.host.isEmpty)
        report.salt = String(repeating: "00", count: 32)
        XCTAssertTrue(report.isWellFormed, "\(report)")
        XCTAssertNil(offline.pendingReport(identity: "bob@example.org"), "another user's logins are not alice's")
        let many = (0..<60).map { "login \(1_790_000_000 + $0) sshd OK\n" }.joined()
        try h.plain.write(name, Array(("failures 0\n" + many).utf8))
        let newest = try XCTUnwrap(offline.pendingReport(identity: "alice@example.org"))
        XCTAssertEqual(newest.logins.count, 50)
        XCTAssertEqual(newest.logins.first?.time, 1_790_000_010)
    }

    /// A backend that answers "wrong PIN" gets no offline check, even with offline on.
    func testWrongPINAnswerStaysOnline() throws {
        let h = try LoginHarness()
        try h.register()
        h.config.offline = true
        h.config.tpm = "swtpm:host=127.0.0.1,port=1"
        let offline = OfflineLogins(config: h.config, storage: h.plain)
        var l = Login(config: h.config, platform: h.platform)
        l.offline = offline
        let (outcome, _) = l.run(unixUser: "alice") { SecretBytes(copying: Array("9999".utf8)) }
        XCTAssertEqual(outcome, .wrongPIN)
        XCTAssertEqual(offline.use, .none)
    }
}

private struct Answering: HTTPTransport {
    let answer: @Sendable (HTTPRequest) throws(HTTPTransportError) -> HTTPResponse
    init(_ answer: @escaping @Sendable (HTTPRequest) throws(HTTPTransportError) -> HTTPResponse) { self.answer = answer }
    func send(_ request: HTTPRequest) throws(HTTPTransportError) -> HTTPResponse { try answer(request) }
}
