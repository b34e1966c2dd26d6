import Foundation
package import ServiceLifecycle

/// A data directory's database, opened and migrated: SQLite (`SQLiteStorage`) or PostgreSQL
/// (`PostgresStorage`).
package protocol StorageBackend: ServerStorage, AdminStorage {
    /// What must run in the server's service group while the backend is used (PostgreSQL's
    /// connection pool), nil when nothing must.
    var service: (any Service)? { get }
    /// Closes its connections; the backend is not used afterwards.
    func close() async
}

/// A data directory's database as the commands and the server hold it (`DataDirectory.openDatabase`).
/// Close it when done: a PostgreSQL database keeps a pool of connections.
package final class ServerDatabase: Sendable {
    /// The opened backend itself, for the storage contract tests (`StorageContractTests`), which
    /// call its methods directly on both backends.
    package let backend: any StorageBackend
    /// What `/health` and messages call it: the SQLite file or the PostgreSQL URL.
    package let name: String
    /// True for PostgreSQL.
    package let isShared: Bool

    init(backend: any StorageBackend, name: String, isShared: Bool) {
        self.backend = backend; self.name = name; self.isShared = isShared
    }

    /// An SQLite database opened by its caller.
    package convenience init(sqlite: SQLiteStorage, name: String = "sqlite") {
        self.init(backend: sqlite, name: name, isShared: false)
    }

    /// Closes the database's connections (PostgreSQL); nothing for SQLite.
    package func close() async { await backend.close() }
}
