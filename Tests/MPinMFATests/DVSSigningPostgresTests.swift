import Foundation
import Logging
import MPinServer
import PostgresNIO
import XCTest

/// The DVS tests again with the server's state in PostgreSQL (signing keys, their counters,
/// DVS registration tokens): needs MPIN_TEST_POSTGRES (`make test-postgres`); reported as
/// skipped, by name, without it.
final class DVSSigningPostgresTests: DVSSigningTests {
    override class var onPostgres: Bool { true }
    override func setUp() async throws {
        try XCTSkipIf(ProcessInfo.processInfo.environment[TestPostgres.environmentVariable] == nil,
                      "\(TestPostgres.environmentVariable) is not set: PostgreSQL variant skipped (make test-postgres runs it)")
        try await super.setUp()
    }

    override func testEnrolSignAndVerify() async throws { try await super.testEnrolSignAndVerify() }
    override func testWrongSigningPINIsCountedAndBlocksTheKeyNotTheLogin() async throws {
        try await super.testWrongSigningPINIsCountedAndBlocksTheKeyNotTheLogin()
    }
    override func testSecondFactorIsNeededToSign() async throws { try await super.testSecondFactorIsNeededToSign() }
    override func testTokensAndStates() async throws { try await super.testTokensAndStates() }
    override func testDeleteUserDeletesBothTokens() async throws { try await super.testDeleteUserDeletesBothTokens() }
    override func testBadInputToTheEndpoints() async throws { try await super.testBadInputToTheEndpoints() }
}

/// Throwaway databases on the MPIN_TEST_POSTGRES server (as in MPinServerTests).
enum TestPostgres {
    static let environmentVariable = "MPIN_TEST_POSTGRES"

    private static func connect() async throws -> (PostgresConnection, PostgresURL, Logger) {
        guard let text = ProcessInfo.processInfo.environment[environmentVariable], let base = PostgresURL(text) else {
            throw XCTSkip("\(environmentVariable) is not set")
        }
        var logger = Logger(label: "mpin-test-postgres")
        logger.logLevel = .critical
        let config = PostgresConnection.Configuration(host: base.host, port: base.port, username: base.user, password: nil,
                                                      database: base.database, tls: .disable)
        return (try await PostgresConnection.connect(configuration: config, id: 1, logger: logger), base, logger)
    }

    private static func execute(_ sql: String) async throws {
        let (c, _, logger) = try await connect()
        do { _ = try await c.query(PostgresQuery(unsafeSQL: sql), logger: logger).collect() } catch {
            try? await c.close()
            throw error
        }
        try? await c.close()
    }

    /// A fresh, empty database: its name and URL.
    static func createDatabase() async throws -> (name: String, url: String) {
        let (c, base, _) = try await connect()
        try? await c.close()
        let name = "mpin_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
        try await execute("CREATE DATABASE \(name)")
        var url = base
        url.database = name
        return (name, url.description)
    }

    static func dropDatabase(_ name: String) async throws {
        try await execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }
}
