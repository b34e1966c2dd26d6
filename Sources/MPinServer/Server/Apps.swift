import Foundation
import MPinCrypto
import MPinWire

/// One registered application (OAuth client) as `mpin-server app list` shows it: never its
/// secret, which is stored only as a hash (docs/MFA.md §1, §2).
package struct AppSummary: Codable, Sendable, Equatable {
    package var clientId: String
    package var name: String
    package var redirectURI: String
    package var logoURL: String
    /// Seconds since the epoch.
    package var created: Double
    /// The algorithm of its ID tokens, `RS256` or `ES256` (docs/MFA.md §7.1).
    package var idTokenAlg: String
}

/// The credentials of a new application, shown to the administrator once.
package struct NewAppCredentials: Codable, Sendable, Equatable {
    package var clientId: String
    package var clientSecret: String
}

/// Refusals of the application commands, shown to the operator; they never quote a secret.
package enum AppError: Error, Equatable, Sendable, CustomStringConvertible {
    case invalidName
    case invalidRedirectURI
    case invalidLogoURL
    case invalidIDTokenAlg
    case noSuchApp(String)
    case randomFailure

    package var description: String {
        switch self {
        case .invalidName: return "the name must be 1 to 100 characters without control characters"
        case .invalidRedirectURI: return "the redirect URI must be an absolute http or https URL without a fragment"
        case .invalidLogoURL: return "the logo URL must be an absolute http or https URL"
        case .invalidIDTokenAlg: return "the ID token algorithm must be RS256 or ES256"
        case .noSuchApp(let id): return "no such app: \(id)"
        case .randomFailure: return "the random source failed"
        }
    }
}

/// The administrator's operations on applications (`mpin-server app …`), directly on the
/// database as `Admin` does for users.
package struct AppAdmin: Sendable {
    let storage: any AdminStorage

    package init(storage: SQLiteStorage) { self.storage = storage }
    package init(database: ServerDatabase) { self.storage = database.backend }

    /// Registers an application and returns its client id and secret; only the secret's
    /// SHA-256 is stored, so this is the one time it can be shown.
    /// Its ID tokens are signed with `idTokenAlg`: RS256 unless the relying party asks for ES256
    /// (RS256 is OpenID Connect's default, OIDC Core §15.1, Dynamic Registration §2).
    package func add(name: String, redirectURI: String, logoURL: String = "",
                    idTokenAlg: String = "RS256") async throws -> NewAppCredentials {
        guard Self.isValidName(name) else { throw AppError.invalidName }
        guard OIDCKey.algorithms.contains(idTokenAlg) else { throw AppError.invalidIDTokenAlg }
        guard Self.isValidRedirectURI(redirectURI) else { throw AppError.invalidRedirectURI }
        guard logoURL.isEmpty || Self.isHTTPURL(logoURL) else { throw AppError.invalidLogoURL }
        guard let idBytes = try? SystemRandom.bytes(16), let secretBytes = try? SystemRandom.bytes(32) else {
            throw AppError.randomFailure
        }
        let credentials = NewAppCredentials(clientId: "cid-" + Hex.encode(idBytes),
                                            clientSecret: Base64URL.encode(secretBytes))
        try await storage.addApp(clientID: credentials.clientId, name: name, redirectURI: redirectURI, logoURL: logoURL,
                                 secretHash: Secrets.hash(credentials.clientSecret), idTokenAlg: idTokenAlg, now: Date())
        return credentials
    }

    /// Every application, oldest first.
    package func list() async throws -> [AppSummary] { try await storage.listApps() }

    /// Deletes the application.
    package func delete(clientID: String) async throws {
        if !(try await storage.deleteApp(clientID: clientID)) { throw AppError.noSuchApp(clientID) }
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
