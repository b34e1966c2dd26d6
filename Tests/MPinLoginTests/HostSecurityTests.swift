#if canImport(Glibc)
import Glibc
#endif
import MPinClient
import MPinCrypto
import MPinLogin
import MPinTestSupport
import XCTest

/// The host-side findings of docs/SECURITY.md §6 that MPinLogin decides: Unix names compared byte for
/// byte and resolved by the name service (finding 4), the PIN's format (8, 9), and the account
/// state that pam_sm_acct_mgmt reports (12). The PAM-level behaviour is covered by
/// Tests/Integration/host-security-tests.sh.
final class HostSecurityTests: XCTestCase {
    // MARK: Finding 4: names are bytes

    /// Swift's `==` says `\u{212A}ate` (KELVIN SIGN) equals `Kate`, and a decomposed é equals
    /// the precomposed one; the account map must not.
    func testAccountMapComparesNamesByteForByte() throws {
        let map = AccountMap(storage: MemoryStorage())
        let kate = AccountMap.Account(identity: "kate@example.org", backend: "http://mpin.test")
        try map.set(kate, for: "Kate")
        XCTAssertEqual("\u{212A}ate", "Kate", "the premise: Swift equates them")
        XCTAssertNil(try map.account(for: "\u{212A}ate"), "KELVIN SIGN + ate is not Kate")
        XCTAssertEqual(try map.account(for: "Kate"), kate)

        let jose = AccountMap.Account(identity: "jose@example.org", backend: "http://mpin.test")
        try map.set(jose, for: "jos\u{E9}")
        XCTAssertNil(try map.account(for: "jose\u{301}"), "a decomposed é is another name")
        XCTAssertEqual(try map.account(for: "jos\u{E9}"), jose)

        // Setting or removing under an equivalent name leaves the other entry alone.
        try map.set(nil, for: "\u{212A}ate")
        XCTAssertEqual(try map.account(for: "Kate"), kate)
        try map.set(.init(identity: "mallory@example.org", backend: "http://evil.test"), for: "\u{212A}ate")
        XCTAssertEqual(try map.account(for: "Kate"), kate)
        XCTAssertEqual(try map.all().count, 3)
    }

    /// A login under a name canonically equivalent to a registered one finds nothing, asks no
    /// PIN and sends nothing.
    func testLoginUnderAnEquivalentNameIsUnknown() throws {
        let h = try LoginHarness()
        try h.register(unixUser: "Kate", identity: "kate@example.org", pin: "1357")
        let run = h.login("\u{212A}ate", pin: "1357")
        XCTAssertEqual(run.outcome, .unknownUser)
        XCTAssertFalse(run.pinAsked)
        XCTAssertEqual(run.routes, [])
        XCTAssertEqual(h.login("Kate", pin: "1357").outcome, .success)
    }

    func testSameUnixName() {
        XCTAssertTrue(sameUnixName("alice", "alice"))
        XCTAssertFalse(sameUnixName("alice", "ALICE"))
        XCTAssertFalse(sameUnixName("\u{212A}ate", "Kate"))
        XCTAssertFalse(sameUnixName("jos\u{E9}", "jose\u{301}"))
    }

    /// Bytes that are not UTF-8 (Latin-1 `jos\xe8`), or that hold a NUL (which would cut the C
    /// string getpwnam gets), are refused before the name service is asked.
    func testUnixAccountRefusesNamesThatAreNotUTF8() {
        for bytes: [UInt8] in [[0x6A, 0x6F, 0x73, 0xE8], [0x6A, 0x6F, 0x73, 0xE9], [0x72, 0x6F, 0x6F, 0x74, 0x00, 0x78], [], [0xC0, 0x80]] {
            XCTAssertThrowsError(try UnixAccount.lookup(bytes: bytes), "\(bytes)") { error in
                XCTAssertEqual(error as? UnixAccount.LookupError, .notUTF8, "\(bytes)")
            }
        }
        XCTAssertNil(UnixAccount.validUTF8([0x6A, 0x6F, 0x73, 0xE8]))
        XCTAssertEqual(UnixAccount.validUTF8(Array("jos\u{E9}".utf8)), "jos\u{E9}")
    }

    /// The name service's own answer: root is uid 0 under its own name; a name no system has is
    /// unknown, not an error.
    func testUnixAccountLookup() throws {
        let root = try UnixAccount.lookup(bytes: Array("root".utf8))
        XCTAssertEqual(root, UnixAccount(name: "root", uid: 0, gid: 0))
        XCTAssertEqual(try UnixAccount.lookup("root"), root)
        XCTAssertThrowsError(try UnixAccount.lookup("no-such-user-\(getpid())-mpin")) { error in
            XCTAssertEqual(error as? UnixAccount.LookupError, .unknown)
        }
    }

    // MARK: Findings 8 and 9: what a PIN is

    func testPINFormat() {
        func valid(_ text: String, _ length: Int = 4) -> Bool { PINFormat.isValid(SecretBytes(copying: text.utf8), length: length) }
        XCTAssertTrue(valid("1234"))
        XCTAssertTrue(valid("0000"))
        XCTAssertTrue(valid("123456", 6))
        XCTAssertFalse(valid("123456"), "6 digits when pin_length is 4")
        XCTAssertFalse(valid("123"))
        XCTAssertFalse(valid(""))
        XCTAssertFalse(valid("12a4"))
        XCTAssertFalse(valid("12 4"))
        XCTAssertFalse(valid("１２３４"), "fullwidth digits are not ASCII digits")
        XCTAssertFalse(valid("correct horse battery staple"))
        XCTAssertFalse(valid("hunter2"))
        XCTAssertNil(PINFormat.lengthNote(length: 4))
        XCTAssertTrue(PINFormat.lengthNote(length: 6)?.contains("10000") == true)
        XCTAssertEqual(PINFormat.rule(length: 4), "exactly 4 digits")
    }

    func testPINLengthKey() throws {
        XCTAssertEqual(LoginConfig().pinLength, 4)
        XCTAssertEqual(try LoginConfig.parse("pin_length = 6\n", file: "f").pinLength, 6)
        XCTAssertEqual(try LoginConfig.parse("pin_length = 4\n", file: "f").pinLength, 4)
        XCTAssertEqual(try LoginConfig.parse("pin_length = 8\n", file: "f").pinLength, 8)
        for bad in ["3", "9", "0", "-4", "four", "", "4.0"] {
            XCTAssertThrowsError(try LoginConfig.parse("pin_length = \(bad)\n", file: "f"), bad) { error in
                XCTAssertTrue((error as? ConfigError)?.message.contains("pin_length must be") == true, "\(error)")
            }
        }
        let options = ModuleOptions(arguments: ["pin_length=6", "account_fail_open"])
        XCTAssertTrue(options.unknown.isEmpty, "\(options.unknown)")
        XCTAssertTrue(options.accountFailOpen)
        XCTAssertFalse(ModuleOptions(arguments: []).accountFailOpen)
        XCTAssertEqual(try options.loadConfig(readFile: { _ in nil }).pinLength, 6)
    }

    // MARK: Finding 12: the account state, and errors that are not "no opinion"

    func testAccountStates() throws {
        let h = try LoginHarness()
        let login = Login(config: h.config, platform: h.platform)
        XCTAssertEqual(try login.accountState(unixUser: "alice"), .unregistered)
        try h.register(pin: "1234")
        XCTAssertEqual(try login.accountState(unixUser: "alice"), .registered)
        XCTAssertEqual(try login.accountState(unixUser: "ALICE"), .unregistered, "names are compared byte for byte")
        try AccountMap(storage: h.plain).set(.init(identity: "bob@example.org", backend: h.config.backend, linked: true), for: "bob")
        XCTAssertEqual(try login.accountState(unixUser: "bob"), .linked)
        try AccountMap(storage: h.plain).set(.init(identity: "carol@example.org", backend: h.config.backend), for: "carol")
        XCTAssertEqual(try login.accountState(unixUser: "carol"), .incomplete, "mapped, but no token in the store")
        for pin in ["0000", "0001", "0002"] { _ = h.login(pin: pin) }
        XCTAssertEqual(try login.accountState(unixUser: "alice"), .blocked)
        XCTAssertTrue(login.isBlocked(unixUser: "alice"))
    }

    /// A REVOKED answer (signed over the host's nonce) is kept with the account, so that
    /// account management refuses it without the network; a later success clears it.
    func testRevocationIsRecordedAndCleared() throws {
        let h = try LoginHarness()
        try h.register(pin: "1234")
        let login = Login(config: h.config, platform: h.platform)
        h.backend.revokeAll()
        XCTAssertEqual(h.login(pin: "1234").outcome, .revoked)
        XCTAssertEqual(try AccountMap(storage: h.plain).account(for: "alice")?.revoked, true)
        XCTAssertEqual(try login.accountState(unixUser: "alice"), .revoked)
        h.backend.reinstateAll()
        XCTAssertEqual(h.login(pin: "1234").outcome, .success)
        XCTAssertEqual(try AccountMap(storage: h.plain).account(for: "alice")?.revoked, false)
        XCTAssertEqual(try login.accountState(unixUser: "alice"), .registered)
    }

    /// A damaged map or a failing store is an error (pam_sm_acct_mgmt: PAM_SERVICE_ERR), where
    /// `isBlocked` used to say "not blocked"; EACCES is marked as the store refusing this
    /// process (PAM_IGNORE for a caller that is not root).
    func testAccountStateErrors() throws {
        let h = try LoginHarness()
        try h.register(pin: "1234")
        let login = Login(config: h.config, platform: h.platform)
        try h.plain.write(AccountMap.document, Array("{\"alice\": ".utf8))
        XCTAssertThrowsError(try login.accountState(unixUser: "alice")) { error in
            XCTAssertEqual((error as? Login.AccountStateError)?.permissionDenied, false)
        }

        let refusing = MemoryStorage()
        refusing.failEveryOperation(with: .systemError(operation: "open", errno: EACCES))
        let closed = Login(config: h.config, platform: TestContext(transport: h.backend, secureStorage: h.secure, nonSecureStorage: refusing))
        XCTAssertThrowsError(try closed.accountState(unixUser: "alice")) { error in
            XCTAssertEqual((error as? Login.AccountStateError)?.permissionDenied, true)
        }
        let broken = MemoryStorage()
        broken.failEveryOperation(with: .noSpace)
        let full = Login(config: h.config, platform: TestContext(transport: h.backend, secureStorage: h.secure, nonSecureStorage: broken))
        XCTAssertThrowsError(try full.accountState(unixUser: "alice")) { error in
            XCTAssertEqual((error as? Login.AccountStateError)?.permissionDenied, false)
        }
        XCTAssertTrue(StorageError(path: "/s", reason: .systemError(operation: "open", errno: EPERM)).isPermissionDenied)
        XCTAssertFalse(StorageError(path: "/s", reason: .insecurePermissions(mode: 0o755)).isPermissionDenied)
    }
}
