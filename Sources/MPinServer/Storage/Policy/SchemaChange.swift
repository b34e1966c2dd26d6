/// A schema change written once for both backends and rendered in each one's SQL (docs/MFA.md §11).
/// The tables up to SQLite's v8 and PostgreSQL's version 4 were written twice, with histories
/// that differ (SQLite created and dropped `pass1`, added columns PostgreSQL had from the
/// start); every change after them is one entry of `StorageSchema.sharedMigrations`, which
/// SQLite registers as a GRDB migration under its `sqliteIdentifier` and PostgreSQL appends
/// to its numbered versions. The two version numbers still differ (each backend's count of
/// its own migrations); both refuse a database newer than the count they know.
package enum SchemaChange: Sendable, Equatable {
    /// A new table; the first column is its primary key.
    case createTable(String, columns: [SchemaColumn])
    case addColumn(table: String, SchemaColumn)
    case createIndex(String, table: String, columns: [String])

    /// Whether both backends can apply the change to a table that already has rows: a column
    /// added NOT NULL needs a default (SQLite refuses it otherwise, PostgreSQL on a non-empty
    /// table). SchemaChangeTests holds every shared migration to it.
    package var appliesToExistingRows: Bool {
        if case .addColumn(_, let column) = self { return column.nullable || column.defaultValue != nil }
        return true
    }
}

/// A column as both backends declare it.
package struct SchemaColumn: Sendable, Equatable {
    /// The values a column holds, each mapped to one type per backend.
    package enum Kind: Sendable, Equatable {
        /// TEXT / text
        case text
        /// INTEGER / bigint
        case integer
        /// REAL / double precision (times: seconds since 1970)
        case real
        /// INTEGER 0 or 1 / boolean
        case boolean
    }

    /// A constant default, rendered as each backend writes it.
    package enum Default: Sendable, Equatable {
        case text(String)
        case integer(Int)
        case real(Double)
        case boolean(Bool)
    }

    package var name: String
    package var kind: Kind
    package var nullable: Bool
    package var defaultValue: Default?

    package init(_ name: String, _ kind: Kind, nullable: Bool = false, default defaultValue: Default? = nil) {
        self.name = name; self.kind = kind; self.nullable = nullable; self.defaultValue = defaultValue
    }
}

/// The SQL a backend speaks.
package enum SQLDialect: Sendable { case sqlite, postgres }

/// A migration written once: its GRDB identifier on SQLite and its statements.
package struct SharedMigration: Sendable {
    package var sqliteIdentifier: String
    package var changes: [SchemaChange]
}

extension SchemaChange {
    /// The statements of this change in `dialect`.
    package func sql(_ dialect: SQLDialect) -> [String] {
        switch self {
        case .createTable(let table, let columns):
            let body = columns.enumerated().map { i, column in column.definition(dialect, primaryKey: i == 0) }
            return ["CREATE TABLE \(table) (" + body.joined(separator: ", ") + ")"]
        case .addColumn(let table, let column):
            return ["ALTER TABLE \(table) ADD COLUMN " + column.definition(dialect, primaryKey: false)]
        case .createIndex(let name, let table, let columns):
            return ["CREATE INDEX \(name) ON \(table)(" + columns.joined(separator: ", ") + ")"]
        }
    }
}

extension SchemaColumn {
    /// `name TYPE [PRIMARY KEY] [NOT NULL] [DEFAULT value]` in `dialect`. A primary key is
    /// NOT NULL on both (SQLite must be told).
    func definition(_ dialect: SQLDialect, primaryKey: Bool) -> String {
        var parts = [name, Self.type(kind, dialect)]
        if primaryKey { parts.append("PRIMARY KEY") }
        if !nullable && (dialect == .sqlite || !primaryKey) { parts.append("NOT NULL") }
        if let defaultValue { parts += ["DEFAULT", Self.literal(defaultValue, dialect)] }
        return parts.joined(separator: " ")
    }

    static func type(_ kind: Kind, _ dialect: SQLDialect) -> String {
        switch (kind, dialect) {
        case (.text, .sqlite): "TEXT"
        case (.text, .postgres): "text"
        case (.integer, .sqlite), (.boolean, .sqlite): "INTEGER"
        case (.integer, .postgres): "bigint"
        case (.real, .sqlite): "REAL"
        case (.real, .postgres): "double precision"
        case (.boolean, .postgres): "boolean"
        }
    }

    static func literal(_ value: Default, _ dialect: SQLDialect) -> String {
        switch value {
        case .text(let text): "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "''") + "'"
        case .integer(let n): String(n)
        case .real(let x): String(x)
        case .boolean(let b): dialect == .sqlite ? (b ? "1" : "0") : (b ? "TRUE" : "FALSE")
        }
    }
}
