import Crypto
import Foundation
import GRDB
package import Logging
import MPinWire
import NIOSSL
import PostgresNIO
#if canImport(Glibc)
import Glibc
#endif

/// The SQLite file's copy: SQLite's online backup API (GRDB's `backup(to:)`), all pages in one
/// step, which runs inside one read transaction on the source. In WAL mode a reader neither
/// waits for the server's writes nor blocks them, so the copy is the last committed state at
/// its start, whatever the server commits meanwhile.
enum SQLiteBackup {
    /// Copies the database at `source` into a new file `name` of `target` (0600); returns the
    /// copy's schema version (`PRAGMA user_version`). The copy is checked (`quick_check`) and
    /// left in rollback-journal mode, one self-contained file without -wal or -shm.
    static func copy(source: String, into target: DirectoryHandle, as name: String) throws -> Int {
        guard let status = try EntryStatus.of(path: source), status.isRegularFile else {
            throw BackupError("\(source): no SQLite database (a symbolic link is not followed)")
        }
        // Created here, 0600 and exclusively, before SQLite opens it by name.
        let fd = try target.create(name, mode: 0o600)
        close(fd)
        do {
            var configuration = Configuration()
            configuration.busyMode = .timeout(10)
            // Not SQLiteStorage: opening that migrates, and a backup must not change the live
            // file (an upgraded program backing up a database its older server still serves).
            let from = try DatabaseQueue(path: source, configuration: configuration)
            let to = try DatabaseQueue(path: target.child(name))
            try from.backup(to: to)
            try from.close()
            let version = try to.writeWithoutTransaction { db -> Int in
                try db.execute(sql: "PRAGMA journal_mode = DELETE")
                let check = try String.fetchOne(db, sql: "PRAGMA quick_check") ?? ""
                guard check == "ok" else { throw BackupError("\(source): the copy fails SQLite's quick_check: \(check)") }
                return try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
            }
            try to.close()
            for suffix in ["-wal", "-shm", "-journal"] { target.remove(name + suffix) }
            return version
        } catch {
            for suffix in ["", "-wal", "-shm", "-journal"] { target.remove(name + suffix) }
            if error is BackupError { throw error }
            throw BackupError("\(source): cannot copy the database: \(error)")
        }
    }

    /// Folds the WAL into the file (a TRUNCATE checkpoint); SQLite removes -wal and -shm when
    /// this last connection closes. Best effort: a file that cannot be opened is kept as it is.
    static func foldWAL(path: String) {
        guard let queue = try? DatabaseQueue(path: path) else { return }
        _ = try? queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        try? queue.close()
    }

    /// The schema version in an SQLite file's header (`user_version`, bytes 60 to 63, big-endian),
    /// read without opening it as a database; nil for a file too short to be one.
    static func userVersion(of name: String, in directory: DirectoryHandle) throws -> Int? {
        let fd = try directory.openForReading(name)
        defer { close(fd) }
        var header = [UInt8](repeating: 0, count: 100)
        var filled = 0
        while filled < header.count {
            let n = try header.withUnsafeMutableBytes { raw in
                try readSome(fd, UnsafeMutableRawBufferPointer(rebasing: raw[filled...]), path: directory.child(name))
            }
            if n == 0 { break }
            filled += n
        }
        guard filled == header.count, header.starts(with: Array("SQLite format 3\u{0}".utf8)) else { return nil }
        return header[60..<64].reduce(0) { $0 << 8 | Int($1) }
    }

    /// Opens the restored file as the server will (migrating an older schema), and checks it.
    static func check(path: String) throws {
        do {
            let storage = try SQLiteStorage(path: path)
            let check = try storage.pool.read { db in try String.fetchOne(db, sql: "PRAGMA quick_check") ?? "" }
            guard check == "ok" else { throw BackupError("\(path) fails SQLite's quick_check: \(check)") }
        } catch let e as BackupError {
            throw e
        } catch let e as SetupError {
            throw BackupError(e.description)
        } catch {
            throw BackupError("\(path): \(error)")
        }
    }
}

/// The PostgreSQL database's copy: its rows, table by table, as JSON (`row_to_json`), read in
/// one REPEATABLE READ READ ONLY transaction: one snapshot of every table, taken while the
/// nodes serve, and blocking none of them.
///
/// Why rows and not pg_dump: pg_dump must be installed on the server's host, at a version no
/// older than the PostgreSQL server's, with its own password plumbing, and its archive needs
/// pg_restore and a database prepared for it. The rows go through the connection and the
/// password the server itself uses, and back into whatever schema this mpin-server creates
/// (its migrations make the tables, indexes and constraints; only rows are restored): a copy
/// taken on an older schema is restored into the current one, the columns added since taking
/// their defaults as a migration gives them to existing rows. Point-in-time recovery (WAL
/// archiving) remains PostgreSQL's own business.
enum PostgresBackup {
    static let filePrefix = "postgresql-"
    /// Rows per INSERT on restore (one JSON array each).
    static let batchRows = 500

    /// One connection (not a pool): a backup is one transaction, a restore too.
    static func connect(url: PostgresURL, password: String?, logger: Logger) async throws -> PostgresConnection {
        let tls: PostgresConnection.Configuration.TLS
        do {
            switch url.sslMode {
            case .disable: tls = .disable
            case .prefer: tls = .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
            case .require: tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
            var c = PostgresConnection.Configuration(host: url.host, port: url.port, username: url.user, password: password,
                                                     database: url.database, tls: tls)
            c.options.connectTimeout = .seconds(5)
            return try await PostgresConnection.connect(configuration: c, id: 1, logger: logger)
        } catch {
            throw BackupError("\(url): cannot connect: " + PostgresStorage.reason(error))
        }
    }

    /// A name as the catalog gives it, safe to write into SQL unquoted.
    static func isPlainIdentifier(_ name: String) -> Bool {
        guard let first = name.utf8.first, first == UInt8(ascii: "_") || (0x61...0x7A).contains(first) else { return false }
        return name.utf8.count <= 63 && name.utf8.allSatisfy { $0 == UInt8(ascii: "_") || (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) }
    }

    /// The schema's tables (those of `current_schema()`; `mpin_schema`, which records the
    /// version, apart) and their columns in table order.
    static func tables(_ c: PostgresConnection, logger: Logger) async throws -> [(name: String, columns: [String])] {
        let rows = try await c.rows("""
            SELECT table_name::text, column_name::text FROM information_schema.columns
            WHERE table_schema = current_schema() AND table_name <> 'mpin_schema'
              AND table_name IN (SELECT table_name FROM information_schema.tables
                                 WHERE table_schema = current_schema() AND table_type = 'BASE TABLE')
            ORDER BY table_name, ordinal_position
            """, logger)
        var result: [(name: String, columns: [String])] = []
        for row in rows {
            let (table, column) = try row.decode((String, String).self)
            guard isPlainIdentifier(table), isPlainIdentifier(column) else {
                throw BackupError("the database holds a table or column mpin-server does not name: \(table).\(column)")
            }
            if result.last?.name == table { result[result.count - 1].columns.append(column) } else { result.append((table, [column])) }
        }
        return result
    }

    /// The schema version `mpin_schema` records; nil when the database has no mpin-server schema.
    static func schemaVersion(_ c: PostgresConnection, logger: Logger) async throws -> Int? {
        let exists = try await c.rows("SELECT to_regclass('mpin_schema') IS NOT NULL", logger).first?.decode(Bool.self) ?? false
        guard exists else { return nil }
        return try await c.rows("SELECT version FROM mpin_schema", logger).first?.decode(Int.self)
    }

    /// Writes every table's rows into `target` (`postgresql-TABLE.jsonl`, 0600), inside the
    /// caller's transaction; their manifest entries.
    static func export(_ c: PostgresConnection, into target: DirectoryHandle, logger: Logger) async throws
        -> (tables: [BackupManifest.Table], files: [BackupManifest.File]) {
        // Every double as the shortest text that reads back to the same bits (PostgreSQL 12 and
        // later do so for any positive value; 3 gives older servers their 17 digits).
        try await c.rows("SET LOCAL extra_float_digits = 3", logger)
        var tables: [BackupManifest.Table] = []
        var files: [BackupManifest.File] = []
        for (table, columns) in try await PostgresBackup.tables(c, logger: logger) {
            let name = filePrefix + table + ".jsonl"
            let fd = try target.create(name, mode: 0o600)
            var hash = SHA256()
            var size: Int64 = 0, count = 0
            var pending: [UInt8] = []
            pending.reserveCapacity(1 << 16)
            func flush() throws {
                try pending.withUnsafeBytes { raw in
                    hash.update(bufferPointer: raw)
                    try writeAll(fd, raw, path: target.child(name))
                }
                size += Int64(pending.count)
                pending.removeAll(keepingCapacity: true)
            }
            do {
                let rows = try await c.query("SELECT row_to_json(t)::text FROM \(unescaped: table) t", logger: logger)
                for try await row in rows {
                    pending += Array(try row.decode(String.self).utf8)
                    pending.append(0x0A)
                    count += 1
                    if pending.count >= 1 << 16 { try flush() }
                }
                try flush()
            } catch {
                close(fd)
                target.remove(name)
                throw error
            }
            do { try syncAndClose(fd, path: target.child(name)) } catch {
                target.remove(name)
                throw error
            }
            tables.append(BackupManifest.Table(name: table, columns: columns, rows: count, file: name))
            files.append(BackupManifest.File(name: name, size: size, sha256: Hex.encode(Array(hash.finalize())), mode: "600"))
        }
        return (tables, files)
    }

    /// Whether any table of the schema holds a row.
    static func holdsRows(_ c: PostgresConnection, logger: Logger) async throws -> Bool {
        for (table, _) in try await tables(c, logger: logger) {
            let found = try await c.rows("SELECT 1 FROM \(unescaped: table) LIMIT 1", logger)
            if !found.isEmpty { return true }
        }
        return false
    }

    /// Other client sessions on the database (other nodes, psql): a restore under them would
    /// be overwritten by, or mislead, whatever they do next. Waits a few seconds for sessions
    /// that are closing (this program's own migration connection among them).
    static func otherSessions(_ c: PostgresConnection, logger: Logger) async throws -> Int {
        var count = 0
        for attempt in 0..<30 {
            count = try await c.rows("""
                SELECT count(*)::bigint FROM pg_stat_activity
                WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
                """, logger).first?.decode(Int.self) ?? 0
            if count == 0 || attempt == 29 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        return count
    }

    /// Inside the caller's transaction (which locked the tables): empties every table and
    /// inserts the backup's rows (`source`'s files, already checked against the manifest).
    static func replaceRows(_ c: PostgresConnection, with copied: [BackupManifest.Table], from source: DirectoryHandle,
                            logger: Logger) async throws {
        let present = try await tables(c, logger: logger)
        let byName = Dictionary(present.map { ($0.name, Set($0.columns)) }, uniquingKeysWith: { a, _ in a })
        for table in copied {
            guard let columns = byName[table.name] else {
                throw BackupError("the backup holds a table this mpin-server's schema does not have: \(table.name)")
            }
            guard isPlainIdentifier(table.name), table.columns.allSatisfy({ isPlainIdentifier($0) && columns.contains($0) }) else {
                throw BackupError("the backup's table \(table.name) has columns this mpin-server's schema does not have")
            }
        }
        for table in present { try await c.rows("DELETE FROM \(unescaped: table.name)", logger) }
        for table in copied where table.rows > 0 {
            let list = table.columns.joined(separator: ", ")
            var inserted = 0
            // The file is read first, then sent in batches: an async call cannot sit inside the
            // reader's closure. (It was checked against the manifest; the rows are hashes and
            // counters, small beside the server's memory.)
            var batches: [String] = []
            try forEachBatch(of: table.file, in: source, rows: batchRows) { batches.append($0) }
            for batch in batches {
                let rows = try await c.rows("""
                    INSERT INTO \(unescaped: table.name) (\(unescaped: list))
                    SELECT \(unescaped: list) FROM json_populate_recordset(NULL::\(unescaped: table.name), \(batch)::json)
                    RETURNING 1
                    """, logger)
                inserted += rows.count
            }
            guard inserted == table.rows else {
                throw BackupError("\(table.file): \(inserted) rows restored, the manifest counts \(table.rows)")
            }
        }
    }

    /// Calls `body` with the file's lines as JSON arrays of at most `rows` elements.
    static func forEachBatch(of name: String, in directory: DirectoryHandle, rows: Int, _ body: (String) throws -> Void) throws {
        let fd = try directory.openForReading(name)
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var line: [UInt8] = []
        var batch: [UInt8] = [UInt8(ascii: "[")]
        var inBatch = 0
        func finish() throws {
            guard inBatch > 0 else { return }
            batch.append(UInt8(ascii: "]"))
            try body(String(decoding: batch, as: UTF8.self))
            batch = [UInt8(ascii: "[")]
            inBatch = 0
        }
        func add() throws {
            guard !line.isEmpty else { return }
            if inBatch > 0 { batch.append(UInt8(ascii: ",")) }
            batch += line
            line.removeAll(keepingCapacity: true)
            inBatch += 1
            if inBatch == rows { try finish() }
        }
        while true {
            let n = try buffer.withUnsafeMutableBytes { try readSome(fd, $0, path: directory.child(name)) }
            if n == 0 { break }
            for byte in buffer[0..<n] {
                if byte == 0x0A { try add() } else { line.append(byte) }
            }
        }
        try add()
        try finish()
    }
}
