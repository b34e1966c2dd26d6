import Foundation
import Logging
import MPinCrypto
import MPinServer
import MPinPostgresTestSupport
import MPinWire
import XCTest

// The storage contract (Sources/MPinServer/Storage/Contract), method by method, called directly
// on a backend opened as the server opens it (`DataDirectory.openDatabase`): every test body
// runs on SQLite here and on PostgreSQL in `StorageContractPostgresTests`, which only names the
// backend. The tests are split as the contract is (StorageContractTests+Server, +Admin, +MFA,
// +DVS, and +Concurrency for parallel calls); this file holds the fixture and the PostgreSQL
// variant. The protocols are the package's (package access, no testable import). Hashes are
// opaque strings to the storage; mpinIds are hex.

class StorageContractTests: XCTestCase {
    /// The backend every test of the class runs on.
    class var storage: TestStorage { .sqlite }

    private(set) var server: TestServer?
    private var database: ServerDatabase?
    /// The backend under test.
    var store: any StorageBackend { database!.backend }
    let now = Date()
    let hour: TimeInterval = 3600

    override func setUp() async throws {
        try await super.setUp()
        if Self.storage == .postgres { try TestStorage.requirePostgres() }
        let server = try await TestServer(storage: Self.storage)
        self.server = server
        database = try await openDatabase()
    }

    override func tearDown() async throws {
        await database?.close()
        database = nil
        await server?.shutdown()
        server = nil
        try await super.tearDown()
    }

    /// A fresh storage object on the test's database (what a restarted server opens).
    func openDatabase() async throws -> ServerDatabase {
        var logger = Logger(label: "storage-contract-test")
        logger.logLevel = .critical
        return try await DataDirectory(path: try XCTUnwrap(server).dataDir).openDatabase(logger: logger)
    }

    /// Closes the storage object and opens another on the same database.
    func reopen() async throws {
        await database?.close()
        database = try await openDatabase()
    }

    /// XCTAssertTrue for an awaited value (its autoclosure cannot await).
    func assertTrue(_ value: Bool, _ message: String = "", file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(value, message, file: file, line: line)
    }

    func mpinID(_ name: String) -> String { Hex.encode(Array(name.utf8)) }

    func fingerprint(_ mpinIDHex: String) -> String { Hex.encode(MPin.hashID(Hex.decode(mpinIDHex)!)) }

    /// Registers and issues an identity of `user` (auto mode); its mpinId.
    @discardableResult
    func issueIdentity(_ name: String, user: String) async throws -> String {
        let id = mpinID(name)
        let saved = try await store.saveRegistration(
            mpinID: id, userID: user, regOTTHash: "ott-" + name, activateKeyHash: "key-" + name,
            expires: now.addingTimeInterval(hour), mode: .auto, activateCodeHash: nil, regCodeHash: nil,
            details: RegistrationDetails(deviceName: nil, source: "127.0.0.1"), now: now)
        XCTAssertEqual(saved, .stored(active: true))
        let issued = try await store.consumeRegistration(mpinID: id, regOTTHash: "ott-" + name, now: now)
        XCTAssertEqual(issued, .issued(userID: user))
        return id
    }

    /// A registration of `user` presenting the registration code with hash `codeHash`.
    func registerWithCode(_ name: String, user: String, codeHash: String, maxAttempts: Int = 3) async throws -> RegistrationOutcome {
        try await Self.registerWithCode(store, name, user: user, codeHash: codeHash, maxAttempts: maxAttempts, now: now)
    }

    /// The same from a concurrent task (which cannot capture the test case).
    static func registerWithCode(_ store: any StorageBackend, _ name: String, user: String, codeHash: String,
                                 maxAttempts: Int = 3, now: Date) async throws -> RegistrationOutcome {
        try await store.saveRegistration(
            mpinID: Hex.encode(Array(name.utf8)), userID: user, regOTTHash: "ott-" + name, activateKeyHash: "key-" + name,
            expires: now.addingTimeInterval(3600), mode: .link, activateCodeHash: nil, regCodeHash: codeHash, details: RegistrationDetails(deviceName: nil, source: "127.0.0.1"), now: now)
    }

    /// A pass-2 result of `mpinID` stored under `hash`.
    func savePass2(_ hash: String, mpinID: String, success: Bool, wid: String = "") async throws -> Bool {
        try await store.saveAuth(authOTTHash: hash, mpinID: mpinID, success: success, wid: wid, otp: nil,
                                 expires: now.addingTimeInterval(60), now: now)
    }
}

/// The same contract on PostgreSQL (MPIN_TEST_POSTGRES; `make test-postgres`).
final class StorageContractPostgresTests: StorageContractTests {
    override class var storage: TestStorage { .postgres }

    /// XCTest on Linux finds a class (and the tests it inherits) through a test it declares:
    /// this one checks that the variant's backend is PostgreSQL.
    func testVariantIsPostgreSQL() async throws {
        try await issueIdentity("variant-1", user: "variant")
        let users = try await store.listUsers(maxAttempts: 3)
        XCTAssertEqual(users.map(\.userId), ["variant"])
        let database = try XCTUnwrap(server?.postgresDatabase)
        let identities = try await TestPostgres.integer("SELECT count(*) FROM identities WHERE user_id = 'variant'",
                                                         database: database)
        XCTAssertEqual(identities, 1)
    }

    /// A direct login's final step is decided on what its node's pass 2 read and applied in one
    /// statement when nothing changed since, and decided on the locked rows when the identity
    /// did (the verdicts themselves are checked by testFinalStepSeesIdentityChangesAfterPass2).
    func testFinalStepIsOneStatementOnlyWhileNothingChanged() async throws {
        let iv = try await issueIdentity("iv-1", user: "iv")
        let before = try XCTUnwrap(store.singleStatementFinalSteps)
        assertTrue(try await savePass2("iv-right", mpinID: iv, success: true))
        let right = try await store.evaluate(authOTTHash: "iv-right", flow: .direct, maxAttempts: 3, now: now)
        XCTAssertEqual(right?.status, 200)
        XCTAssertEqual(store.singleStatementFinalSteps, before + 1, "an unchanged login is one statement")

        // A wrong PIN counted between a right PIN's pass 2 and its final step.
        assertTrue(try await savePass2("iv-right-2", mpinID: iv, success: true))
        assertTrue(try await savePass2("iv-wrong", mpinID: iv, success: false))
        let wrong = try await store.evaluate(authOTTHash: "iv-wrong", flow: .direct, maxAttempts: 3, now: now)
        XCTAssertEqual(wrong?.status, 401)
        let changed = try await store.evaluate(authOTTHash: "iv-right-2", flow: .direct, maxAttempts: 3, now: now)
        XCTAssertEqual(changed?.status, 200)
        XCTAssertEqual(store.singleStatementFinalSteps, before + 1, "a changed identity is decided on the locked rows")
        let counter = try await store.identities(userID: "iv").first?.failedAttempts
        XCTAssertEqual(counter, 0)
    }
}
