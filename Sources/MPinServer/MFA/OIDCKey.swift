import Foundation
import JWTKit
import MPinCrypto
import MPinWire

/// The OpenID provider's signing key (docs/MFA.md §7.1): one P-256 key in `DIR/oidc-es256.pem`
/// (PKCS#8 PEM, 0600), made at the first start that needs it. Signs ID tokens with ES256
/// through jwt-kit and publishes the public half as a JWK.
struct OIDCKey: Sendable {
    let keys: JWTKeyCollection
    /// RFC 7638 thumbprint of the public key, the JWS `kid`.
    let kid: String
    /// The public key as `/oidc/jwks` lists it.
    let jwk: PublicJWK

    init(pem: String) async throws {
        let key = try ES256PrivateKey(pem: pem)
        guard let p = key.parameters else { throw SetupError.io("the OIDC key has no public parameters") }
        // Members in lexicographic order, no spaces: the thumbprint's canonical form (RFC 7638 §3).
        let canonical = #"{"crv":"P-256","kty":"EC","x":"\#(p.x)","y":"\#(p.y)"}"#
        kid = Base64URL.encode(MPinCrypto.SHA256.hash(Array(canonical.utf8)))
        jwk = PublicJWK(kty: "EC", crv: "P-256", x: p.x, y: p.y, use: "sig", alg: "ES256", kid: kid)
        keys = JWTKeyCollection()
        await keys.add(ecdsa: key, kid: JWKIdentifier(string: kid))
    }

    /// A fresh key in PEM form.
    static func generatePEM() -> String { ES256PrivateKey().pemRepresentation }

    /// The compact JWS of `claims`, header `{"alg": "ES256", "kid": …, "typ": "JWT"}`.
    func sign(_ claims: IDTokenClaims) async throws -> String {
        try await keys.sign(claims, kid: JWKIdentifier(string: kid))
    }
}

/// A public key in a JWK Set (RFC 7517).
struct PublicJWK: Codable, Sendable, Equatable {
    var kty: String
    var crv: String
    var x: String
    var y: String
    var use: String
    var alg: String
    var kid: String
}

/// `GET /oidc/jwks`.
struct JWKSet: Codable, Sendable {
    var keys: [PublicJWK]
}

/// The claims of an ID token (docs/MFA.md §7.1). The server only signs them; verifying is the
/// relying party's business, so `verify` checks just the expiry.
struct IDTokenClaims: JWTPayload, Equatable {
    var iss: String
    var sub: String
    var aud: String
    var exp: Int
    var iat: Int
    var auth_time: Int
    var nonce: String?
    var email: String?
    var amr: [String]

    func verify(using algorithm: some JWTAlgorithm) async throws {
        guard exp > Int(Date().timeIntervalSince1970) else {
            throw JWTError.claimVerificationFailure(failedClaim: nil, reason: "expired")
        }
    }
}

extension DataDirectory {
    var oidcKeyPath: String { path + "/oidc-es256.pem" }

    /// The OIDC signing key's PEM, created (0600, never overwriting) on first use; an existing
    /// file must be private to the owner.
    func loadOrCreateOIDCKey() throws -> String {
        if !FileManager.default.fileExists(atPath: oidcKeyPath) {
            do { try writeNewPrivate(oidcKeyPath, OIDCKey.generatePEM()) } catch {
                // Another process may have made it first; reading it below decides.
                if !FileManager.default.fileExists(atPath: oidcKeyPath) { throw error }
            }
        }
        return try readPrivateFile(oidcKeyPath)
    }
}
