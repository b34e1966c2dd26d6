import Foundation
import GRDB
import MPinCrypto
import MPinWire

/// One registered application (OAuth client) as `mpin-server app list` shows it: never its
/// secret, which is stored only as a hash (docs/MFA.md §1, §2).
public struct AppSummary: Codable, Sendable, Equatable {
    public var clientId: String
    public var name: String
    public var redirectURI: String
    public var logoURL: String
    /// Seconds since the epoch.
    public var created: Double
}

/// The credentials of a new application, shown to the administrator once.
public struct NewAppCredentials: Codable, Sendable, Equatable {
    public var clientId: String
    public var clientSecret: String
}

/// Refusals of the application commands, shown to the operator; they never quote a secret.
public enum AppError: Error, Equatable, Sendable, CustomStringConvertible {
    case invalidName
    case invalidRedirectURI
    case invalidLogoURL
    case noSuchApp(String)
    case randomFailure

    public var description: String {
        switch self {
        case .invalidName: return "the name must be 1 to 100 characters without control characters"
        case .invalidRedirectURI: return "the redirect URI must be an absolute http or https URL without a fragment"
        case .invalidLogoURL: return "the logo URL must be an absolute http or https URL"
        case .noSuchApp(let id): return "no such app: \(id)"
        case .randomFailure: return "the random source failed"
        }
    }
}

/// The administrator's operations on applications (`mpin-server app …`), directly on the
/// database as `Admin` does for users.
public struct AppAdmin: Sendable {
    let storage: SQLiteStorage

    public init(storage: SQLiteStorage) { self.storage = storage }

    /// Registers an application and returns its client id and secret; only the secret's
    /// SHA-256 is stored, so this is the one time it can be shown.
    public func add(name: String, redirectURI: String, logoURL: String = "") throws -> NewAppCredentials {
        guard Self.isValidName(name) else { throw AppError.invalidName }
        guard Self.isValidRedirectURI(redirectURI) else { throw AppError.invalidRedirectURI }
        guard logoURL.isEmpty || Self.isHTTPURL(logoURL) else { throw AppError.invalidLogoURL }
        guard let idBytes = try? SystemRandom.bytes(16), let secretBytes = try? SystemRandom.bytes(32) else {
            throw AppError.randomFailure
        }
        let credentials = NewAppCredentials(clientId: "cid-" + Hex.encode(idBytes),
                                            clientSecret: Base64URL.encode(secretBytes))
        try storage.queue.write { db in
            try db.execute(sql: """
                INSERT INTO apps (client_id, name, redirect_uri, logo_url, secret_hash, created)
                VALUES (?, ?, ?, ?, ?, ?)
                """, arguments: [credentials.clientId, name, redirectURI, logoURL,
                                 Secrets.hash(credentials.clientSecret), Date().timeIntervalSince1970])
        }
        return credentials
    }

    /// Every application, oldest first.
    public func list() throws -> [AppSummary] {
        try storage.queue.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM apps ORDER BY created, client_id").map { r in
                AppSummary(clientId: r["client_id"], name: r["name"], redirectURI: r["redirect_uri"],
                           logoURL: r["logo_url"], created: r["created"])
            }
        }
    }

    /// Deletes the application.
    public func delete(clientID: String) throws {
        let found: Bool = try storage.queue.write { db in
            try db.execute(sql: "DELETE FROM apps WHERE client_id = ?", arguments: [clientID])
            guard db.changesCount > 0 else { return false }
            // Its live sessions and unused codes die with it (docs/MFA.md §2).
            try db.execute(sql: "DELETE FROM mfa_sessions WHERE client_id = ?", arguments: [clientID])
            try db.execute(sql: "DELETE FROM authz_codes WHERE client_id = ?", arguments: [clientID])
            return true
        }
        if !found { throw AppError.noSuchApp(clientID) }
    }

    static func isValidName(_ name: String) -> Bool {
        (1...100).contains(name.count) && !name.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    /// An absolute http(s) URL with a host and no fragment (docs/MFA.md §1): the value `/authorize`
    /// compares byte for byte, so it must be one a browser can be sent to unchanged.
    static func isValidRedirectURI(_ uri: String) -> Bool {
        isHTTPURL(uri) && !uri.contains("#")
    }

    static func isHTTPURL(_ s: String) -> Bool {
        guard s.count <= 2048, !s.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value >= 0x7f }),
              let c = URLComponents(string: s), let scheme = c.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = c.host, !host.isEmpty else { return false }
        return true
    }
}

/// Base64url without padding (RFC 4648 §5), the alphabet of OAuth's codes and secrets.
enum Base64URL {
    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
