import Foundation
import MPinServer
import MPinPostgresTestSupport
import XCTest

/// The DVS tests again with the server's state in PostgreSQL (signing keys, their counters,
/// DVS registration tokens): needs MPIN_TEST_POSTGRES (`make test-postgres`); reported as
/// skipped, by name, without it. XCTest runs every test the class inherits.
final class DVSSigningPostgresTests: DVSSigningTests {
    override class var onPostgres: Bool { true }
    override func setUp() async throws {
        try XCTSkipIf(!TestPostgres.isConfigured,
                      "\(TestPostgres.environmentVariable) is not set: PostgreSQL variant skipped (make test-postgres runs it)")
        try await super.setUp()
    }

    /// The class's own test: XCTest on Linux finds a class, and with it every test it inherits,
    /// only through a test the class declares. It checks what the variant is for: the server
    /// runs on its own PostgreSQL database, which it migrated.
    func testVariantIsPostgreSQL() async throws {
        let database = try XCTUnwrap(postgresDatabase)
        let version = try await TestPostgres.integer("SELECT version FROM mpin_schema", database: database)
        XCTAssertGreaterThan(try XCTUnwrap(version), 0)
    }
}
