import Foundation
package import Logging
import MPinCrypto
import MPinPOSIX
import MPinWire
#if canImport(Glibc)
import Glibc
#endif

/// The on-disk state of a deployment: `DIR/config.json`, `DIR/app.key` (HMAC key of the
/// RPS ↔ D-TA signatures), `DIR/dta1.share` and `DIR/dta2.share` (master-secret shares, one
/// per D-TA) and `DIR/mpin.sqlite`, or a PostgreSQL database that `config.json`'s `database`
/// names (its password, if any, in `DIR/database.password`). The directory is 0700 and every
/// file 0600.
package struct DataDirectory: Sendable {
    package let path: String

    package init(path: String) { self.path = path }

    var configPath: String { path + "/config.json" }
    var appKeyPath: String { path + "/app.key" }
    var databasePath: String { path + "/mpin.sqlite" }
    /// The bearer token that opens `/metrics` to other addresses than loopback (0600, optional).
    var metricsTokenPath: String { path + "/metrics.token" }
    /// The PostgreSQL password, when the database needs one (0600, never in config.json).
    var databasePasswordPath: String { path + "/database.password" }
    /// Activation links of `link` mode, one JSON object per line.
    package var spoolPath: String { path + "/mail.spool" }
    func sharePath(_ index: Int) -> String { path + "/dta\(index).share" }

    /// Creates the directory, a fresh config, app key, both shares and the database.
    /// Refuses to touch an already initialised directory.
    @discardableResult
    package static func initialise(path: String, autoActivate: Bool,
                                  adjust: (inout ServerConfig) -> Void = { _ in }) throws -> DataDirectory {
        let dir = DataDirectory(path: path)
        if FileManager.default.fileExists(atPath: dir.configPath) { throw SetupError.dataDirectoryExists(path) }
        if mkdir(path, 0o700) != 0 && errno != EEXIST { throw SetupError.io("cannot create \(path)") }
        guard chmod(path, 0o700) == 0 else { throw SetupError.io("cannot chmod \(path)") }
        var config: ServerConfig
        do {
            config = ServerConfig(appID: Hex.encode(try SystemRandom.bytes(16)))
            config.verification = autoActivate ? .auto : .code
            adjust(&config)
            try dir.writeNew(dir.appKeyPath, Hex.encode(try SystemRandom.bytes(32)))
            try dir.writeNew(dir.sharePath(1), Hex.encode(try MPin.randomMasterSecret()))
            try dir.writeNew(dir.sharePath(2), Hex.encode(try MPin.randomMasterSecret()))
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try dir.writeNew(dir.configPath, String(decoding: try encoder.encode(config), as: UTF8.self))
        } catch let e as MPinCryptoError {
            throw SetupError.io("random source failed: \(e)")
        }
        // A PostgreSQL database is migrated when first opened (`init --database` opens it at once).
        if !config.usesPostgres { _ = try SQLiteStorage(path: dir.databasePath) }
        return dir
    }

    /// The certificate and key files `config.json` names (relative names are inside the data
    /// directory), nil when it names neither; one without the other is an invalid setting.
    package func tlsFiles(_ config: ServerConfig) throws -> TLSFiles? {
        func resolved(_ p: String) -> String { p.hasPrefix("/") ? p : path + "/" + p }
        switch (config.tlsCertificate, config.tlsKey) {
        case (nil, nil): return nil
        case (let cert?, let key?): return TLSFiles(certificatePath: resolved(cert), keyPath: resolved(key))
        case (nil, _): throw SetupError.invalidSetting(configPath, "tlsCertificate")
        case (_, nil): throw SetupError.invalidSetting(configPath, "tlsKey")
        }
    }

    /// Writes a self-signed certificate for `host` as `DIR/tls.crt` (0644) and its key as
    /// `DIR/tls.key` (0600), and names both in `config.json`. Refuses to replace existing files.
    /// Returns the certificate's path: the `cacert` of clients.
    @discardableResult
    package func addSelfSignedCertificate(host: String) throws -> String {
        let certPath = path + "/tls.crt", keyPath = path + "/tls.key"
        let made: (certificatePEM: String, keyPEM: String)
        do { made = try SelfSignedCertificate.make(host: host) } catch {
            throw SetupError.io("cannot make a certificate for \(host): \(error)")
        }
        var config = try loadConfig()
        try writeNew(keyPath, made.keyPEM.trimmingCharacters(in: .newlines))
        try writeNew(certPath, made.certificatePEM.trimmingCharacters(in: .newlines), mode: 0o644)
        config.tlsCertificate = "tls.crt"
        config.tlsKey = "tls.key"
        try replaceConfig(config)
        return certPath
    }

    /// Rewrites `config.json` atomically (a new file renamed over the old one).
    func replaceConfig(_ config: ServerConfig) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let temporary = configPath + ".new"
        unlink(temporary)
        try writeNew(temporary, String(decoding: try encoder.encode(config), as: UTF8.self))
        guard rename(temporary, configPath) == 0 else { throw SetupError.io("cannot replace \(configPath)") }
    }

    /// Reads `config.json`.
    package func loadConfig() throws -> ServerConfig {
        guard let data = FileManager.default.contents(atPath: configPath) else { throw SetupError.missingFile(configPath) }
        let config: ServerConfig
        do { config = try JSONDecoder().decode(ServerConfig.self, from: data) } catch {
            throw SetupError.corruptFile(configPath)
        }
        if let key = config.outOfRangeSetting { throw SetupError.invalidSetting(configPath, key) }
        return config
    }

    /// The token of `/metrics` from other addresses, nil without the file; at least 16
    /// characters (surrounding white space ignored), in a private file.
    func loadMetricsToken() throws -> String? {
        guard FileManager.default.fileExists(atPath: metricsTokenPath) else { return nil }
        let token = try readPrivate(metricsTokenPath).trimmingCharacters(in: .whitespacesAndNewlines)
        guard token.utf8.count >= 16, token.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw SetupError.corruptFile(metricsTokenPath)
        }
        return token
    }

    /// The app key, checking that the file is private.
    func loadAppKey() throws -> String {
        let text = try readPrivate(appKeyPath)
        guard Hex.decode(text, length: 32) != nil else { throw SetupError.corruptFile(appKeyPath) }
        return text
    }

    /// A D-TA's master-secret share (1 or 2), checking that the file is private.
    func loadShare(_ index: Int) throws -> [UInt8] {
        let p = sharePath(index)
        guard let bytes = Hex.decode(try readPrivate(p), length: 32) else { throw SetupError.corruptFile(p) }
        return bytes
    }

    /// The SQLite database. `busyTimeout`: how long a transaction waits for another process's lock.
    package func openStorage(busyTimeout: Double = 10) throws -> SQLiteStorage {
        try SQLiteStorage(path: databasePath, busyTimeout: busyTimeout)
    }

    /// The database `config.json` names (SQLite by default, or PostgreSQL), opened and migrated:
    /// refused with `SetupError.schemaTooNew` when a newer mpin-server migrated it. Close it
    /// when done. `busyTimeout`: SQLite's wait for another process's lock. `inServiceGroup`:
    /// the caller runs the database's `service` (PostgreSQL's pool) in its service group
    /// instead of the database running it itself (the server).
    func openDatabase(config: ServerConfig? = nil, busyTimeout: Double = 10, inServiceGroup: Bool,
                      logger: Logger = Logger(label: "mpin-server")) async throws -> ServerDatabase {
        let config = try config ?? loadConfig()
        guard let text = config.database, text != "sqlite" else {
            return ServerDatabase(backend: try openStorage(busyTimeout: busyTimeout), name: databasePath, isShared: false)
        }
        guard let url = PostgresURL(text) else { throw SetupError.invalidSetting(configPath, "database") }
        let password = FileManager.default.fileExists(atPath: databasePasswordPath) ? try readPrivate(databasePasswordPath) : nil
        let storage = try await PostgresStorage.open(url: url, password: password, logger: logger, runsClient: !inServiceGroup)
        return ServerDatabase(backend: storage, name: url.description, isShared: true)
    }

    /// The database `config.json` names, for a command or a test: it runs what it needs itself
    /// until `close()`.
    package func openDatabase(config: ServerConfig? = nil, busyTimeout: Double = 10,
                             logger: Logger = Logger(label: "mpin-server")) async throws -> ServerDatabase {
        try await openDatabase(config: config, busyTimeout: busyTimeout, inServiceGroup: false, logger: logger)
    }

    /// What nodes copied from this directory must share besides the database: the ID-token
    /// key and the verdict key (hosts pin it), made now rather than by each node's first `serve`.
    package func prepareForNodes() throws {
        _ = try loadOrCreateOIDCKey()
        _ = try loadOrCreateOIDCRSAKey()
        _ = try loadOrCreateVerdictKey()
    }

    /// Undoes `initialise` (an `init --database` whose database cannot be used): removes the
    /// files it wrote, so that `init` can be run again.
    package func removeInitialisedFiles() throws {
        for p in [configPath, appKeyPath, sharePath(1), sharePath(2), oidcKeyPath, oidcRSAKeyPath, verdictKeyPath] { unlink(p) }
    }

    /// `readPrivate` for the other files of the directory (the OIDC key).
    func readPrivateFile(_ p: String) throws -> String { try readPrivate(p) }
    /// `writeNew` for the other files of the directory.
    func writeNewPrivate(_ p: String, _ text: String) throws { try writeNew(p, text) }

    private func readPrivate(_ p: String) throws -> String {
        guard let status = FileStatus(path: p) else { throw SetupError.missingFile(p) }
        guard status.mode & 0o077 == 0 else { throw SetupError.insecurePermissions(p) }
        guard let data = FileManager.default.contents(atPath: p) else { throw SetupError.corruptFile(p) }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Writes a new file created 0600 (O_EXCL: never follows or reuses an existing path).
    private func writeNew(_ p: String, _ text: String, mode: mode_t = 0o600) throws {
        let fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw SetupError.io("cannot create \(p)") }
        defer { close(fd) }
        // The mode exactly, whatever the umask.
        guard fchmod(fd, mode) == 0 else { throw SetupError.io("cannot chmod \(p)") }
        let bytes = Array((text + "\n").utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count, fsync(fd) == 0 else { throw SetupError.io("cannot write \(p)") }
    }
}
