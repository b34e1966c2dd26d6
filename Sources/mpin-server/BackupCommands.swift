import ArgumentParser
import MPinServer

/// `mpin-server backup --data DIR TARGET`: a consistent copy of the data directory and the
/// database, taken while the server serves (ServerBackup).
struct BackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy the master-secret shares, keys, config and database into a new directory, while serving.")
    @OptionGroup var options: DataOption
    @Argument(help: ArgumentHelp("The backup directory: new, or empty; made 0700, its files 0600.", valueName: "target"))
    var target: String

    func run() async throws {
        let summary: ServerBackup.Summary
        do { summary = try await ServerBackup.run(dataDirectory: options.data, target: target) } catch let e as BackupError {
            throw ValidationError(e.description)
        } catch let e as SetupError {
            throw ValidationError(e.description)
        } catch {
            throw ValidationError("backup failed: \(error)")
        }
        let database = summary.manifest.database
        let rows = database.tables.map { tables in ", \(tables.reduce(0) { $0 + $1.rows }) rows in \(tables.count) tables" } ?? ""
        print("backed up \(options.data) to \(target): \(summary.manifest.files.count) files,"
              + " database \(database.url ?? database.kind) schema version \(database.schemaVersion)\(rows)")
        for note in summary.notes { print(note) }
        print("keep it as private as the data directory: it holds both master-secret shares")
    }
}

/// `mpin-server restore --data DIR BACKUP [--force]`: puts a backup back (ServerRestore).
struct RestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Restore a backup into the data directory (and its database); the server must be stopped.",
        discussion: """
            The backup is checked first (manifest, sizes, SHA-256 checksums) and refused as a whole if \
            anything differs. Existing state (files in the data directory, rows in the PostgreSQL \
            database) is replaced only with --force, and then kept in DIR/before-restore-TIME/.
            """)
    @OptionGroup var options: DataOption
    @Flag(name: .long, help: "Replace existing state, keeping it in DIR/before-restore-TIME/.")
    var force = false
    @Argument(help: ArgumentHelp("The directory `mpin-server backup` wrote.", valueName: "backup"))
    var backup: String

    func run() async throws {
        let summary: ServerRestore.Summary
        do {
            summary = try await ServerRestore.run(dataDirectory: options.data, backup: backup, force: force)
        } catch let e as BackupError {
            throw ValidationError(e.description)
        } catch {
            throw ValidationError("restore failed: \(error)")
        }
        let database = summary.manifest.database
        print("restored \(options.data) from \(backup) (taken \(summary.manifest.created)):"
              + " \(summary.manifest.files.count) files, database \(database.url ?? database.kind)")
        if let aside = summary.aside {
            print("the previous state is kept in \(aside)")
            if summary.asideRestorable { print("to put it back: mpin-server restore --data \(options.data) --force \(aside)") }
        }
    }
}
