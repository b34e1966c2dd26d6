import Foundation
package import Logging
import PostgresNIO
#if canImport(Glibc)
import Glibc
#endif

/// `mpin-server backup --data DIR TARGET`: everything needed to bring the server back, taken
/// while it serves. The data directory's files (config.json, both D-TA master-secret shares,
/// app.key, verdict.key, the ID-token keys, a TLS key and certificate kept there, the
/// PostgreSQL password, metrics.token, the activation-link spool) are copied as they are; the
/// database consistently (`SQLiteBackup`, `PostgresBackup`); `manifest.json` last, with every
/// file's size and SHA-256. TARGET is made 0700 (or must be an empty directory, which then
/// becomes 0700), every file in it 0600 (a certificate 0644), nothing is written through a
/// symbolic link, and a failed backup removes what it wrote.
package enum ServerBackup {
    /// What a backup did, for the command to print: no secret in it.
    package struct Summary: Sendable {
        package var manifest: BackupManifest
        /// What was not copied, and why (a symbolic link, a TLS file outside the directory).
        package var notes: [String]
    }

    /// Names of the data directory that are not copied as files: the database (copied by
    /// SQLite's backup) and its companions, a config.json being replaced.
    static func isDatabaseFile(_ name: String) -> Bool { name.hasPrefix("mpin.sqlite") }

    package static func run(dataDirectory: String, target: String, logger: Logger = quietLogger) async throws -> Summary {
        let source = try DirectoryHandle(path: dataDirectory)
        let dir = DataDirectory(path: dataDirectory)
        let config: ServerConfig
        do { config = try dir.loadConfig() } catch let e as SetupError { throw BackupError(e.description) }
        let (output, created) = try openTarget(target)
        var written: [String] = []
        do {
            var notes: [String] = []
            let (files, fileNotes) = try copyFiles(from: source, to: output, config: config, written: &written)
            notes += fileNotes
            let database = try await copyDatabase(dir, config: config, into: output, logger: logger, written: &written)
            var manifest = BackupManifest(format: BackupManifest.formatName, formatVersion: BackupManifest.currentFormatVersion,
                                          created: BackupManifest.timestamp(), source: dataDirectory,
                                          database: database.copy, files: files + database.files)
            manifest.files.sort { $0.name < $1.name }
            _ = try writeNewFile(BackupManifest.fileName, try manifest.encoded(), in: output)
            written.append(BackupManifest.fileName)
            output.sync()
            return Summary(manifest: manifest, notes: notes)
        } catch {
            for name in written { output.remove(name) }
            if created { rmdir(target) }
            if let e = error as? FileSystemError { throw BackupError(e.description) }
            throw error
        }
    }

    /// The backup directory: made 0700, or an existing empty directory (set to 0700). Never a
    /// symbolic link, never a directory that holds anything. Also says whether it was made here.
    static func openTarget(_ target: String) throws -> (DirectoryHandle, Bool) {
        if let status = try EntryStatus.of(path: target) {
            guard status.isDirectory else {
                throw BackupError("\(target) exists and is not a directory (a symbolic link is not followed): give a new or empty directory")
            }
            let handle = try DirectoryHandle(path: target)
            guard try handle.names().isEmpty else { throw BackupError("\(target) is not empty: give a new or empty directory") }
            try handle.setMode(0o700)
            return (handle, false)
        }
        guard mkdir(target, 0o700) == 0 else { throw BackupError(FileSystemError("create the directory", target).description) }
        do {
            let handle = try DirectoryHandle(path: target)
            try handle.setMode(0o700)
            return (handle, true)
        } catch {
            rmdir(target)
            throw error
        }
    }

    /// Copies every regular file at the top of the data directory but the database's; notes what
    /// is left out.
    static func copyFiles(from source: DirectoryHandle, to output: DirectoryHandle, config: ServerConfig,
                          written: inout [String]) throws -> ([BackupManifest.File], [String]) {
        var files: [BackupManifest.File] = [], notes: [String] = []
        for name in try source.names() where !isDatabaseFile(name) && !name.hasSuffix(".new") {
            guard let status = try source.status(name), !status.isDirectory else { continue }
            guard BackupManifest.isPlainName(name), name != BackupManifest.fileName else {
                notes.append("not copied: \(source.child(name)) (a name a backup does not hold)")
                continue
            }
            guard status.isRegularFile else {
                notes.append("not copied: \(source.child(name)) is not a regular file (a symbolic link is not followed)")
                continue
            }
            // A certificate may be readable by others; nothing else is, and nothing is executable.
            let mode = status.permissions & 0o644 == 0o644 && name.hasSuffix(".crt") ? 0o644 : 0o600
            let (size, sha256) = try copyFile(name, from: source, to: output, mode: UInt32(mode))
            written.append(name)
            files.append(BackupManifest.File(name: name, size: size, sha256: sha256, mode: String(mode, radix: 8)))
        }
        for required in ["config.json", "app.key", "dta1.share", "dta2.share"] where !files.contains(where: { $0.name == required }) {
            throw BackupError("\(source.child(required)) is missing: this data directory cannot be backed up as a whole")
        }
        // TLS files config.json names outside the directory are the administrator's to keep.
        for (key, value) in [("tlsCertificate", config.tlsCertificate), ("tlsKey", config.tlsKey)] {
            if let value, value.contains("/") { notes.append("not copied: \(key) \(value) (outside the data directory: back it up yourself)") }
        }
        return (files, notes)
    }

    static func copyDatabase(_ dir: DataDirectory, config: ServerConfig, into output: DirectoryHandle, logger: Logger,
                             written: inout [String]) async throws -> (copy: BackupManifest.DatabaseCopy, files: [BackupManifest.File]) {
        guard config.usesPostgres, let text = config.database else {
            let name = "mpin.sqlite"
            let version = try SQLiteBackup.copy(source: dir.databasePath, into: output, as: name)
            written.append(name)
            let known = SQLiteStorage.schemaVersion
            guard version <= known else {
                throw BackupError("\(dir.databasePath): schema version \(version) is newer than this mpin-server knows (\(known)):"
                                  + " back it up with the mpin-server that serves it")
            }
            let (size, sha256) = try checksum(name, in: output)
            return (BackupManifest.DatabaseCopy(kind: "sqlite", schemaVersion: version, programSchemaVersion: known, file: name),
                    [BackupManifest.File(name: name, size: size, sha256: sha256, mode: "600")])
        }
        guard let url = PostgresURL(text) else { throw BackupError(SetupError.invalidSetting(dir.configPath, "database").description) }
        let password = FileManager.default.fileExists(atPath: dir.databasePasswordPath)
            ? try dir.readPrivateFile(dir.databasePasswordPath) : nil
        let connection = try await PostgresBackup.connect(url: url, password: password, logger: logger)
        do {
            let result = try await PostgresStorage.transaction(on: connection, logger: logger) { c in
                // One snapshot for every table, and no write possible through this session.
                try await c.rows("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY", logger)
                guard let version = try await PostgresBackup.schemaVersion(c, logger: logger) else {
                    throw BackupError("\(url): no mpin-server schema in this database")
                }
                let known = PostgresStorage.schemaVersion
                guard version <= known else {
                    throw BackupError("\(url): schema version \(version) is newer than this mpin-server knows (\(known)):"
                                      + " back it up with the mpin-server that serves it")
                }
                let exported = try await PostgresBackup.export(c, into: output, logger: logger)
                return (BackupManifest.DatabaseCopy(kind: "postgresql", schemaVersion: version, programSchemaVersion: known,
                                                    url: url.description, tables: exported.tables), exported.files)
            }
            try? await connection.close()
            written += result.1.map(\.name)
            return result
        } catch {
            try? await connection.close()
            // Whatever the export had written before it failed.
            for name in (try? output.names()) ?? [] where name.hasPrefix(PostgresBackup.filePrefix) { output.remove(name) }
            if let e = error as? BackupError { throw e }
            throw BackupError("\(url): cannot copy the database: " + PostgresStorage.reason(error))
        }
    }

    /// postgres-nio's own log lines stay out of a command's output.
    package static var quietLogger: Logger {
        var logger = Logger(label: "mpin-server")
        logger.logLevel = .critical
        return logger
    }
}
