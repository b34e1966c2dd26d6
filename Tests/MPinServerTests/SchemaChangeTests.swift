import Foundation
import GRDB
import MPinServer
import MPinPostgresTestSupport
import XCTest

// The schema changes written once (`SchemaChange`, docs/MFA.md §11) as each backend's SQL: the exact
// statements, and that both databases accept them. The migrations themselves run in every
// test that opens a database (and `SchemaVersionTests` checks the version refusal).

/// A table using every column kind, default and an index: what a new table would look like.
private let sample: [SchemaChange] = [
    .createTable("widgets", columns: [
        SchemaColumn("widget_id", .text),
        SchemaColumn("count", .integer, default: .integer(0)),
        SchemaColumn("weight", .real, nullable: true),
        SchemaColumn("label", .text, default: .text("it's")),
        SchemaColumn("enabled", .boolean, default: .boolean(true)),
    ]),
    .createIndex("widgets_label", table: "widgets", columns: ["label", "count"]),
    .addColumn(table: "widgets", SchemaColumn("seen", .real, default: .real(0.5))),
]

final class SchemaChangeTests: XCTestCase {
    func testEachDialectsStatements() {
        XCTAssertEqual(sample.flatMap { $0.sql(.sqlite) }, [
            "CREATE TABLE widgets (widget_id TEXT PRIMARY KEY NOT NULL, count INTEGER NOT NULL DEFAULT 0, weight REAL, "
                + "label TEXT NOT NULL DEFAULT 'it''s', enabled INTEGER NOT NULL DEFAULT 1)",
            "CREATE INDEX widgets_label ON widgets(label, count)",
            "ALTER TABLE widgets ADD COLUMN seen REAL NOT NULL DEFAULT 0.5",
        ])
        XCTAssertEqual(sample.flatMap { $0.sql(.postgres) }, [
            "CREATE TABLE widgets (widget_id text PRIMARY KEY, count bigint NOT NULL DEFAULT 0, weight double precision, "
                + "label text NOT NULL DEFAULT 'it''s', enabled boolean NOT NULL DEFAULT TRUE)",
            "CREATE INDEX widgets_label ON widgets(label, count)",
            "ALTER TABLE widgets ADD COLUMN seen double precision NOT NULL DEFAULT 0.5",
        ])
        // The shipped change renders as the hand-written statements it replaced.
        XCTAssertEqual(StorageSchema.sharedMigrations.first?.changes.flatMap { $0.sql(.sqlite) },
                       ["ALTER TABLE reg_codes ADD COLUMN failures INTEGER NOT NULL DEFAULT 0"])
        XCTAssertEqual(StorageSchema.sharedMigrations.first?.changes.flatMap { $0.sql(.postgres) },
                       ["ALTER TABLE reg_codes ADD COLUMN failures bigint NOT NULL DEFAULT 0"])
    }

    /// A column added NOT NULL without a default would fail on databases that have rows.
    func testEverySharedMigrationAppliesToTablesWithRows() {
        XCTAssertFalse(SchemaChange.addColumn(table: "widgets", SchemaColumn("strict", .integer)).appliesToExistingRows)
        XCTAssertTrue(SchemaChange.addColumn(table: "widgets", SchemaColumn("seen", .real, default: .real(0.5))).appliesToExistingRows)
        for migration in StorageSchema.sharedMigrations {
            for change in migration.changes {
                XCTAssertTrue(change.appliesToExistingRows, "\(migration): \(change)")
            }
        }
    }

    func testSQLiteAcceptsTheStatementsAndTheDefaults() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            for statement in sample.flatMap({ $0.sql(.sqlite) }) { try db.execute(sql: statement) }
            try db.execute(sql: "INSERT INTO widgets (widget_id) VALUES ('w')")
            let row = try XCTUnwrap(Row.fetchOne(db, sql: "SELECT count, weight, label, enabled, seen FROM widgets"))
            XCTAssertEqual(row["count"] as Int, 0)
            XCTAssertNil(row["weight"] as Double?)
            XCTAssertEqual(row["label"] as String, "it's")
            XCTAssertEqual(row["enabled"] as Bool, true)
            XCTAssertEqual(row["seen"] as Double, 0.5)
            XCTAssertThrowsError(try db.execute(sql: "INSERT INTO widgets (widget_id) VALUES (NULL)"), "the key is NOT NULL")
        }
    }
}

final class SchemaChangePostgresTests: XCTestCase {
    func testPostgreSQLAcceptsTheStatementsAndTheDefaults() async throws {
        try TestStorage.requirePostgres()
        let (database, _) = try await TestPostgres.createDatabase()
        do {
            for statement in sample.flatMap({ $0.sql(.postgres) }) { try await TestPostgres.execute(statement, database: database) }
            try await TestPostgres.execute("INSERT INTO widgets (widget_id) VALUES ('w')", database: database)
            let matches = try await TestPostgres.integer("""
                SELECT count(*) FROM widgets WHERE count = 0 AND weight IS NULL AND label = 'it''s' AND enabled AND seen = 0.5
                """, database: database)
            XCTAssertEqual(matches, 1)
        } catch { try? await TestPostgres.dropDatabase(database); throw error }
        try await TestPostgres.dropDatabase(database)
    }
}
