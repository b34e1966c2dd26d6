import Foundation
import Logging
import MPinServer
import PostgresNIO

/// Throwaway databases on the PostgreSQL server named by MPIN_TEST_POSTGRES
/// (`postgresql://USER@HOST:PORT/DB`, a role that may create databases; `make test-postgres`
/// starts a throwaway cluster and sets it), for the PostgreSQL variants of the server's tests.
/// A test skips, saying why, before it gets here when the variable is not set.
package enum TestPostgres {
    package static let environmentVariable = "MPIN_TEST_POSTGRES"

    /// What a helper throws when MPIN_TEST_POSTGRES is not set (a test that got here without
    /// checking fails with it rather than skipping silently).
    package struct NotConfigured: Error, CustomStringConvertible {
        package var description: String { "\(TestPostgres.environmentVariable) is not set" }
    }

    /// Whether MPIN_TEST_POSTGRES is set at all (a value that is not a URL is the caller's failure).
    package static var isConfigured: Bool { ProcessInfo.processInfo.environment[environmentVariable] != nil }

    /// The server's URL, from MPIN_TEST_POSTGRES; nil when unset or not a postgresql:// URL.
    package static var url: PostgresURL? { ProcessInfo.processInfo.environment[environmentVariable].flatMap(PostgresURL.init) }

    static var logger: Logger {
        var l = Logger(label: "mpin-test-postgres")
        l.logLevel = .critical
        return l
    }

    /// Runs `body` on a connection to the MPIN_TEST_POSTGRES database (or `database`).
    package static func withConnection<T>(database: String? = nil, _ body: (PostgresConnection) async throws -> T) async throws -> T {
        guard let base = url else { throw NotConfigured() }
        let config = PostgresConnection.Configuration(host: base.host, port: base.port, username: base.user, password: nil,
                                                      database: database ?? base.database, tls: .disable)
        let connection = try await PostgresConnection.connect(configuration: config, id: 1, logger: logger)
        do {
            let result = try await body(connection)
            try? await connection.close()
            return result
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// Creates a fresh, empty database; returns its name and URL.
    package static func createDatabase() async throws -> (name: String, url: String) {
        guard var url else { throw NotConfigured() }
        let name = "mpin_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
        try await withConnection { c in
            _ = try await c.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: logger).collect()
        }
        url.database = name
        return (name, url.description)
    }

    /// Drops a database made by `createDatabase`, closing what is still connected to it.
    package static func dropDatabase(_ name: String) async throws {
        try await withConnection { c in
            _ = try await c.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"), logger: logger).collect()
        }
    }

    /// One statement on a test database.
    package static func execute(_ sql: String, database: String) async throws {
        try await withConnection(database: database) { c in
            _ = try await c.query(PostgresQuery(unsafeSQL: sql), logger: logger).collect()
        }
    }

    /// The first column of the first row, as an Int.
    package static func integer(_ sql: String, database: String) async throws -> Int? {
        try await withConnection(database: database) { c in
            try await c.query(PostgresQuery(unsafeSQL: sql), logger: logger).collect().first?.decode(Int.self)
        }
    }
}
