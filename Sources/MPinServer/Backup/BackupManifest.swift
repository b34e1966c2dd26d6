import Crypto
import Foundation
import MPinCrypto
import MPinWire
#if canImport(Glibc)
import Glibc
#endif

/// `manifest.json` of a backup directory: what it holds and how to check it. Written last, so
/// that a backup without one is an unfinished backup; `restore` reads it first and refuses a
/// file that is missing, altered (size or SHA-256) or not listed.
package struct BackupManifest: Codable, Sendable, Equatable {
    /// What the directory is, so that `restore` refuses some other directory's manifest.json.
    static let formatName = "mpin-server backup"
    /// The layout's version: a later one `restore` does not know is refused.
    static let currentFormatVersion = 1
    static let fileName = "manifest.json"

    package struct File: Codable, Sendable, Equatable {
        package var name: String
        package var size: Int64
        package var sha256: String
        /// The permission bits it is restored with (0600 but for a certificate).
        package var mode: String
    }

    package struct Table: Codable, Sendable, Equatable {
        package var name: String
        /// The columns the rows carry, in the order of the table; a row is restored into
        /// these columns only (columns added by a later schema take their default).
        package var columns: [String]
        package var rows: Int
        /// The file of its rows, one JSON object per line.
        package var file: String
    }

    package struct DatabaseCopy: Codable, Sendable, Equatable {
        /// `sqlite` or `postgresql`.
        package var kind: String
        /// The schema version of the database copied (each backend counts its own).
        package var schemaVersion: Int
        /// The schema version this mpin-server writes on that backend.
        package var programSchemaVersion: Int
        /// SQLite: the copied file.
        package var file: String?
        /// PostgreSQL: the database (URL without password) and its tables.
        package var url: String?
        package var tables: [Table]?
    }

    package var format: String
    package var formatVersion: Int
    /// When the copy was taken (UTC, ISO 8601).
    package var created: String
    /// The data directory it was taken from.
    package var source: String
    package var database: DatabaseCopy
    /// Every file of the backup but this one, the database's included.
    package var files: [File]
}

/// A failed backup or restore, said to the administrator: never a secret's value.
package struct BackupError: Error, Sendable, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = description }
}

extension BackupManifest {
    func encoded() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(self)) + [0x0A]
    }

    static func decode(_ bytes: [UInt8], path: String) throws(BackupError) -> BackupManifest {
        let manifest: BackupManifest
        do { manifest = try JSONDecoder().decode(BackupManifest.self, from: Data(bytes)) } catch {
            throw BackupError("\(path) is not an mpin-server backup manifest")
        }
        guard manifest.format == formatName else { throw BackupError("\(path) is not an mpin-server backup manifest") }
        guard manifest.formatVersion <= currentFormatVersion else {
            throw BackupError("\(path): backup format \(manifest.formatVersion) is newer than this mpin-server knows"
                              + " (\(currentFormatVersion)); restore it with the mpin-server that made it, or a newer one")
        }
        for file in manifest.files where !isPlainName(file.name) || file.name == fileName {
            throw BackupError("\(path) names a file outside the backup: \(file.name)")
        }
        return manifest
    }

    /// A name without a slash, not `.` or `..`, not hidden: what a backup may hold.
    static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty && !name.contains("/") && !name.hasPrefix(".") && name.utf8.count <= 255
    }

    static func timestamp(_ date: Date = Date()) -> String {
        let format = ISO8601DateFormatter()
        format.formatOptions = [.withInternetDateTime]
        return format.string(from: date)
    }
}

/// Copies `name` from `source` to a new file in `target` with `mode`, returning its size and
/// SHA-256; the copy is synced before it counts.
func copyFile(_ name: String, from source: DirectoryHandle, to target: DirectoryHandle, as targetName: String? = nil,
              mode: UInt32) throws -> (size: Int64, sha256: String) {
    let input = try source.openForReading(name)
    defer { close(input) }
    let targetName = targetName ?? name
    let output = try target.create(targetName, mode: mode)
    var hash = Crypto.SHA256()
    var size: Int64 = 0
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    // The buffer held the file's contents (a key, a share): wiped before it goes.
    defer { buffer.wipe() }
    do {
        while true {
            let n = try buffer.withUnsafeMutableBytes { try readSome(input, $0, path: source.child(name)) }
            if n == 0 { break }
            try buffer.withUnsafeBytes { raw in
                let chunk = UnsafeRawBufferPointer(rebasing: raw[0..<n])
                hash.update(bufferPointer: chunk)
                try writeAll(output, chunk, path: target.child(targetName))
            }
            size += Int64(n)
        }
    } catch {
        close(output)
        target.remove(targetName)
        throw error
    }
    do { try syncAndClose(output, path: target.child(targetName)) } catch {
        target.remove(targetName)
        throw error
    }
    return (size, Hex.encode(Array(hash.finalize())))
}

/// Size and SHA-256 of a file of `directory`.
func checksum(_ name: String, in directory: DirectoryHandle) throws -> (size: Int64, sha256: String) {
    let input = try directory.openForReading(name)
    defer { close(input) }
    var hash = Crypto.SHA256()
    var size: Int64 = 0
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    defer { buffer.wipe() }
    while true {
        let n = try buffer.withUnsafeMutableBytes { try readSome(input, $0, path: directory.child(name)) }
        if n == 0 { break }
        buffer.withUnsafeBytes { hash.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
        size += Int64(n)
    }
    return (size, Hex.encode(Array(hash.finalize())))
}

/// The whole of a (small) file of `directory`.
func readWhole(_ name: String, in directory: DirectoryHandle, limit: Int = 1 << 20) throws -> [UInt8] {
    let input = try directory.openForReading(name)
    defer { close(input) }
    var result: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 1 << 14)
    while true {
        let n = try buffer.withUnsafeMutableBytes { try readSome(input, $0, path: directory.child(name)) }
        if n == 0 { break }
        result += buffer[0..<n]
        if result.count > limit { throw BackupError("\(directory.child(name)) is too large") }
    }
    return result
}

/// Writes `bytes` as a new file of `directory` (synced), returning its manifest entry.
func writeNewFile(_ name: String, _ bytes: [UInt8], in directory: DirectoryHandle, mode: UInt32 = 0o600) throws -> BackupManifest.File {
    let fd = try directory.create(name, mode: mode)
    do { try bytes.withUnsafeBytes { try writeAll(fd, $0, path: directory.child(name)) } } catch {
        close(fd)
        directory.remove(name)
        throw error
    }
    do { try syncAndClose(fd, path: directory.child(name)) } catch {
        directory.remove(name)
        throw error
    }
    return BackupManifest.File(name: name, size: Int64(bytes.count), sha256: Hex.encode(Array(Crypto.SHA256.hash(data: bytes))),
                               mode: String(mode, radix: 8))
}
