import Foundation
package import Logging
import PostgresNIO
#if canImport(Glibc)
import Glibc
#endif

/// `mpin-server restore --data DIR BACKUP [--force]`: puts a backup back.
///
/// Checked before anything changes: the manifest, every file against its size and SHA-256
/// (a file missing, altered or not listed refuses the whole backup), the schema version, and
/// the keys themselves (they must load as the server loads them). Then, with the data
/// directory locked against `serve` (`DataDirectoryLock`):
/// 1. state already there (files in DIR, rows in the PostgreSQL database) is refused unless
///    `force`; with it, the files are moved, as they are, into `DIR/before-restore-TIME/`
///    and the rows exported there (`postgresql-TABLE.jsonl`): nothing is deleted;
/// 2. the backup's files are staged in a hidden directory of DIR (same file system), with
///    their modes and, when run as root, DIR's owner, then renamed into place;
/// 3. the database: the SQLite file is opened as the server opens it (an older schema is
///    migrated) and checked; PostgreSQL's rows replace the tables' in one transaction,
///    after mpin-server's migrations made the schema (`PostgresBackup`).
/// Any failure moves the restored files out and the previous ones back, and the database
/// transaction rolls back: DIR is left as it was.
package enum ServerRestore {
    package struct Summary: Sendable {
        package var manifest: BackupManifest
        /// Where the state that was there before went, if there was any.
        package var aside: String?
        /// It has a manifest: `restore --force` of that directory puts it back.
        package var asideRestorable = false
    }

    package static func run(dataDirectory: String, backup: String, force: Bool,
                            logger: Logger = ServerBackup.quietLogger) async throws -> Summary {
        do {
            return try await restore(dataDirectory: dataDirectory, backup: backup, force: force, logger: logger)
        } catch let e as FileSystemError {
            throw BackupError(e.description)
        } catch let e as SetupError {
            throw BackupError(e.description)
        }
    }

    private static func restore(dataDirectory: String, backup: String, force: Bool, logger: Logger) async throws -> Summary {
        // 1. The backup, checked as a whole.
        let input = try DirectoryHandle(path: backup)
        let manifest = try verify(input)
        let config = try DataDirectory(path: backup).loadConfig()
        if config.usesPostgres != (manifest.database.kind == "postgresql") {
            throw BackupError("\(input.child(BackupManifest.fileName)): its database (\(manifest.database.kind)) is not the one config.json names")
        }

        // 2. The data directory, made if need be, and locked.
        let (data, owner, created) = try openDataDirectory(dataDirectory)
        do {
            return try await restore(manifest: manifest, config: config, input: input, data: data, owner: owner,
                                     force: force, logger: logger)
        } catch {
            // A directory made here for a restore that did not happen goes again (rmdir: only if empty).
            if created { rmdir(dataDirectory) }
            throw error
        }
    }

    private static func restore(manifest: BackupManifest, config: ServerConfig, input: DirectoryHandle, data: DirectoryHandle,
                                owner: (uid: UInt32, gid: UInt32), force: Bool, logger: Logger) async throws -> Summary {
        try DataDirectoryLock.restoring(data)
        // The SQLite file about to be kept aside, with its WAL folded in (nobody else has it
        // open: the lock), so that the kept state is one file a later restore accepts.
        if force, try data.status("mpin.sqlite-wal") != nil {
            SQLiteBackup.foldWAL(path: data.child("mpin.sqlite"))
        }
        let existing = try data.names().filter { name in (try? data.status(name))?.isDirectory == false }

        // 3. PostgreSQL: the schema this program makes, nobody else connected, rows already there.
        var postgres: (connection: PostgresConnection, url: PostgresURL)? = nil
        var holdsRows = false
        if manifest.database.kind == "postgresql" {
            guard let text = config.database, let url = PostgresURL(text) else {
                throw BackupError("\(input.child("config.json")): database is not a postgresql:// URL")
            }
            let password = manifest.files.contains(where: { $0.name == "database.password" })
                ? String(decoding: try readWhole("database.password", in: input), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                : nil
            let connection = try await PostgresBackup.connect(url: url, password: password, logger: logger)
            do {
                try await PostgresStorage.migrate(connection, url: url, logger: logger)
                let others = try await PostgresBackup.otherSessions(connection, logger: logger)
                guard others == 0 else {
                    throw BackupError("\(url): \(others) other session(s) are connected to the database: stop every mpin-server"
                                      + " node that uses it (systemctl stop mpin-server on each) and any other client first")
                }
                holdsRows = try await PostgresBackup.holdsRows(connection, logger: logger)
            } catch {
                try? await connection.close()
                if let e = error as? BackupError { throw e }
                if let e = error as? SetupError { throw BackupError(e.description) }
                throw BackupError("\(url): " + PostgresStorage.reason(error))
            }
            postgres = (connection, url)
        }
        do {
            let summary = try await replace(manifest: manifest, input: input, data: data, owner: owner, existing: existing,
                                            postgres: postgres, holdsRows: holdsRows, force: force, logger: logger)
            if let postgres { try? await postgres.connection.close() }
            return summary
        } catch {
            if let postgres { try? await postgres.connection.close() }
            throw error
        }
    }

    /// Steps 1 to 3 of the type's description, once the backup is checked and DIR locked.
    private static func replace(manifest: BackupManifest, input: DirectoryHandle, data: DirectoryHandle,
                                owner: (uid: UInt32, gid: UInt32), existing: [String],
                                postgres: (connection: PostgresConnection, url: PostgresURL)?, holdsRows: Bool, force: Bool,
                                logger: Logger) async throws -> Summary {
        if (!existing.isEmpty || holdsRows) && !force {
            var what: [String] = []
            if !existing.isEmpty { what.append("\(data.path) holds " + existing.prefix(4).joined(separator: ", ") + (existing.count > 4 ? ", …" : "")) }
            if holdsRows, let postgres { what.append("\(postgres.url) holds rows") }
            throw BackupError(what.joined(separator: "; ") + ": restore does not replace existing state unless given --force"
                              + " (which keeps it in \(data.path)/before-restore-TIME/)")
        }

        // 4. The backup's files, staged beside their places.
        let stagingName = ".restore-\(getpid())"
        let staging = try data.makeDirectory(stagingName)
        var staged: [String] = []
        func dropStaging() {
            for name in (try? staging.names()) ?? [] { staging.remove(name) }
            data.removeDirectory(stagingName)
        }
        do {
            for file in manifest.files where !file.name.hasPrefix(PostgresBackup.filePrefix) {
                let mode: UInt32 = file.mode == "644" ? 0o644 : 0o600
                let (size, sha256) = try copyFile(file.name, from: input, to: staging, mode: mode)
                staged.append(file.name)
                guard size == file.size, sha256 == file.sha256 else {
                    throw BackupError("\(input.child(file.name)) changed while it was being restored")
                }
                if runningAsRoot { try staging.changeOwner(file.name, owner: owner.uid, group: owner.gid) }
            }
            // The keys load as the server loads them.
            let stagedDirectory = DataDirectory(path: staging.path)
            _ = try stagedDirectory.loadConfig()
            _ = try stagedDirectory.loadAppKey()
            _ = try stagedDirectory.loadShare(1)
            _ = try stagedDirectory.loadShare(2)
            staging.sync()
        } catch {
            dropStaging()
            throw error
        }

        // 5. What was there, aside; the staged files, in.
        var aside: DirectoryHandle? = nil
        var asideName = ""
        var keptTables: [BackupManifest.Table] = []
        var moved: [String] = [], placed: [String] = []
        func undo() {
            for name in placed { data.remove(name) }
            if let aside {
                for name in moved { try? aside.move(name, to: data, as: name) }
                for name in (try? aside.names()) ?? [] where name.hasPrefix(PostgresBackup.filePrefix) { aside.remove(name) }
                if (try? aside.names())?.isEmpty == true { data.removeDirectory(asideName) }
            }
            dropStaging()
            data.sync()
        }
        do {
            if !existing.isEmpty || holdsRows {
                let made = try makeAside(in: data)
                if runningAsRoot { try data.changeOwner(made.name, owner: owner.uid, group: owner.gid) }
                aside = made.handle
                asideName = made.name
                for name in existing {
                    try data.move(name, to: made.handle, as: name)
                    moved.append(name)
                }
                made.handle.sync()
            }
            for name in staged {
                try staging.move(name, to: data, as: name)
                placed.append(name)
            }
            data.sync()

            // 6. The database.
            if let postgres {
                let tables = manifest.database.tables ?? []
                let asideHandle = aside
                keptTables = try await PostgresStorage.transaction(on: postgres.connection, logger: logger, durable: true) { c in
                    let present = try await PostgresBackup.tables(c, logger: logger)
                    if !present.isEmpty {
                        try await c.rows(PostgresQuery(unsafeSQL: "LOCK TABLE " + present.map(\.name).joined(separator: ", ")
                                                       + " IN ACCESS EXCLUSIVE MODE"), logger)
                    }
                    // Checked again under the locks: a client may have written since the first look.
                    var kept: [BackupManifest.Table] = []
                    if try await PostgresBackup.holdsRows(c, logger: logger) {
                        guard force, let asideHandle else {
                            throw BackupError("\(postgres.url) received rows while the restore ran: nothing was restored")
                        }
                        kept = try await PostgresBackup.export(c, into: asideHandle, logger: logger).tables
                    }
                    try await PostgresBackup.replaceRows(c, with: tables, from: input, logger: logger)
                    return kept
                }
            } else {
                try SQLiteBackup.check(path: data.child("mpin.sqlite"))
                // Whatever SQLite left beside the file belongs to the server's user too.
                if runningAsRoot {
                    for suffix in ["-wal", "-shm"] { try data.changeOwner("mpin.sqlite" + suffix, owner: owner.uid, group: owner.gid) }
                }
            }
        } catch {
            undo()
            if let e = error as? BackupError { throw e }
            if let e = error as? FileSystemError { throw BackupError(e.description + "; nothing was restored") }
            if let postgres { throw BackupError("\(postgres.url): " + PostgresStorage.reason(error) + "; nothing was restored") }
            throw BackupError("\(error); nothing was restored")
        }
        dropStaging()
        try? data.setMode(0o700)
        data.sync()
        var restorable = false
        if let aside {
            restorable = describeKept(aside, source: data.path, tables: keptTables, target: postgres?.url)
            if runningAsRoot {
                try? aside.changeOwner(BackupManifest.fileName, owner: owner.uid, group: owner.gid)
                for name in (try? aside.names()) ?? [] { try? aside.changeOwner(name, owner: owner.uid, group: owner.gid) }
            }
        }
        return Summary(manifest: manifest, aside: aside?.path, asideRestorable: restorable)
    }

    /// Reads the manifest and checks every file against it; refuses files it does not list.
    static func verify(_ input: DirectoryHandle) throws -> BackupManifest {
        let manifestPath = input.child(BackupManifest.fileName)
        guard try input.status(BackupManifest.fileName) != nil else {
            throw BackupError("\(input.path) holds no \(BackupManifest.fileName): not an mpin-server backup, or an unfinished one")
        }
        let manifest = try BackupManifest.decode(try readWhole(BackupManifest.fileName, in: input), path: manifestPath)
        let listed = Set(manifest.files.map(\.name))
        guard listed.count == manifest.files.count else { throw BackupError("\(manifestPath) lists a file twice") }
        for name in try input.names() where name != BackupManifest.fileName && !listed.contains(name) {
            throw BackupError("\(input.child(name)) is not in the backup's manifest: the backup was altered; nothing was restored")
        }
        for file in manifest.files {
            guard try input.status(file.name) != nil else {
                throw BackupError("\(input.child(file.name)) is missing: the backup is incomplete; nothing was restored")
            }
            guard file.mode == "600" || file.mode == "644" else { throw BackupError("\(manifestPath): unexpected mode for \(file.name)") }
            let (size, sha256) = try checksum(file.name, in: input)
            guard size == file.size, sha256 == file.sha256 else {
                throw BackupError("\(input.child(file.name)) does not match the manifest (size or SHA-256):"
                                  + " the backup is damaged or was altered; nothing was restored")
            }
        }
        for required in ["config.json", "app.key", "dta1.share", "dta2.share"] where !listed.contains(required) {
            throw BackupError("\(manifestPath) lists no \(required): the backup is incomplete; nothing was restored")
        }
        let database = manifest.database
        switch database.kind {
        case "sqlite":
            guard let file = database.file, listed.contains(file), file == "mpin.sqlite" else {
                throw BackupError("\(manifestPath) names no SQLite database file")
            }
            guard database.schemaVersion <= SQLiteStorage.schemaVersion else {
                throw BackupError("the backup's database has schema version \(database.schemaVersion), newer than this mpin-server"
                                  + " knows (\(SQLiteStorage.schemaVersion)): restore it with a newer mpin-server")
            }
        case "postgresql":
            guard let tables = database.tables, tables.allSatisfy({ listed.contains($0.file) && $0.file == PostgresBackup.filePrefix + $0.name + ".jsonl" }) else {
                throw BackupError("\(manifestPath) does not list the file of every table")
            }
            guard database.schemaVersion <= PostgresStorage.schemaVersion else {
                throw BackupError("the backup's database has schema version \(database.schemaVersion), newer than this mpin-server"
                                  + " knows (\(PostgresStorage.schemaVersion)): restore it with a newer mpin-server")
            }
        default:
            throw BackupError("\(manifestPath): unknown database kind \(database.kind)")
        }
        return manifest
    }

    /// The data directory, made 0700 if it does not exist yet; the owner its files get when
    /// restore runs as root: the directory's, or for a new one its parent's (the package's
    /// /var/lib/mpin-server belongs to the mpin-server user).
    static func openDataDirectory(_ path: String) throws -> (DirectoryHandle, owner: (uid: UInt32, gid: UInt32), created: Bool) {
        if try EntryStatus.of(path: path) == nil {
            let parent = URL(fileURLWithPath: path).deletingLastPathComponent().path
            guard let parentStatus = try EntryStatus.of(path: parent), parentStatus.isDirectory else {
                throw BackupError("\(parent) does not exist: make it first")
            }
            guard mkdir(path, 0o700) == 0 else { throw FileSystemError("create the directory", path) }
            let handle = try DirectoryHandle(path: path)
            try handle.setMode(0o700)
            if runningAsRoot {
                guard fchown(handle.descriptor, parentStatus.owner, parentStatus.group) == 0 else {
                    rmdir(path)
                    throw FileSystemError("give to uid \(parentStatus.owner) the directory", path)
                }
            }
            return (handle, (parentStatus.owner, parentStatus.group), true)
        }
        let handle = try DirectoryHandle(path: path)
        let status = try handle.ownStatus()
        return (handle, (status.owner, status.group), false)
    }

    /// Gives the kept state a manifest, so that `restore` takes it back as it takes a backup,
    /// when it is whole: the four files a data directory needs, and its database (the SQLite
    /// file alone, or the rows exported from `target`, the database its config.json names).
    /// False, and no manifest, otherwise: the files are kept all the same.
    static func describeKept(_ aside: DirectoryHandle, source: String, tables: [BackupManifest.Table], target: PostgresURL?) -> Bool {
        do {
            let names = try aside.names()
            guard ["config.json", "app.key", "dta1.share", "dta2.share"].allSatisfy(names.contains),
                  !names.contains(BackupManifest.fileName) else { return false }
            let config = try DataDirectory(path: aside.path).loadConfig()
            let database: BackupManifest.DatabaseCopy
            if config.usesPostgres {
                guard let target, config.database.flatMap(PostgresURL.init) == target else { return false }
                database = BackupManifest.DatabaseCopy(kind: "postgresql", schemaVersion: PostgresStorage.schemaVersion,
                                                       programSchemaVersion: PostgresStorage.schemaVersion,
                                                       url: target.description, tables: tables)
            } else {
                guard names.contains("mpin.sqlite"), !names.contains(where: { $0.hasPrefix("mpin.sqlite-") }),
                      let version = try SQLiteBackup.userVersion(of: "mpin.sqlite", in: aside) else { return false }
                database = BackupManifest.DatabaseCopy(kind: "sqlite", schemaVersion: version,
                                                       programSchemaVersion: SQLiteStorage.schemaVersion, file: "mpin.sqlite")
            }
            var files: [BackupManifest.File] = []
            for name in names {
                guard BackupManifest.isPlainName(name), let status = try aside.status(name), status.isRegularFile else { return false }
                let (size, sha256) = try checksum(name, in: aside)
                let mode = status.permissions & 0o644 == 0o644 && name.hasSuffix(".crt") ? "644" : "600"
                files.append(BackupManifest.File(name: name, size: size, sha256: sha256, mode: mode))
            }
            let manifest = BackupManifest(format: BackupManifest.formatName, formatVersion: BackupManifest.currentFormatVersion,
                                          created: BackupManifest.timestamp(), source: source, database: database, files: files)
            _ = try writeNewFile(BackupManifest.fileName, try manifest.encoded(), in: aside)
            aside.sync()
            return true
        } catch {
            return false
        }
    }

    /// `before-restore-TIME` (UTC), 0700, in the data directory.
    static func makeAside(in data: DirectoryHandle) throws -> (name: String, handle: DirectoryHandle) {
        let stamp = BackupManifest.timestamp().replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "")
        var name = "before-restore-" + stamp
        var n = 1
        while try data.status(name) != nil {
            n += 1
            name = "before-restore-\(stamp)-\(n)"
        }
        return (name, try data.makeDirectory(name))
    }
}
