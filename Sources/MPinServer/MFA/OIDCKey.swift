import CryptoExtras
import Foundation
import JWTKit
import MPinCrypto
import MPinWire

/// The OpenID provider's signing keys (docs/MFA.md §7.1): a P-256 key in `DIR/oidc-es256.pem`
/// and a 2048-bit RSA key in `DIR/oidc-rs256.pem` (PKCS#8 PEM, 0600 each), made at the first
/// start that needs them. Signs ID tokens with ES256 or RS256 through jwt-kit, as each
/// application was registered, and publishes both public halves as JWKs.
struct OIDCKey: Sendable {
    /// The algorithms a token can be signed with; RS256 is OpenID Connect's default.
    static let algorithms: [String] = ["RS256", "ES256"]

    let keys: JWTKeyCollection
    /// RFC 7638 thumbprints of the public keys, the JWS `kid`s, by algorithm.
    let kids: [String: String]
    /// The public keys as `/oidc/jwks` lists them (RS256 first).
    let jwks: [PublicJWK]

    init(es256PEM: String, rs256PEM: String) async throws {
        let ec = try ES256PrivateKey(pem: es256PEM)
        guard let p = ec.parameters else { throw SetupError.io("the OIDC ES256 key has no public parameters") }
        // Members in lexicographic order, no spaces: the thumbprint's canonical form (RFC 7638 §3).
        let ecKid = Self.thumbprint(#"{"crv":"P-256","kty":"EC","x":"\#(p.x)","y":"\#(p.y)"}"#)

        let rsa = try Insecure.RSA.PrivateKey(pem: rs256PEM)
        let (modulus, exponent) = try rsa.publicKey.getKeyPrimitives()
        let n = Base64URL.encode(Array(modulus)), e = Base64URL.encode(Array(exponent))
        guard modulus.count >= 256 else { throw SetupError.io("the OIDC RS256 key is shorter than 2048 bits") }
        let rsaKid = Self.thumbprint(#"{"e":"\#(e)","kty":"RSA","n":"\#(n)"}"#)

        kids = ["ES256": ecKid, "RS256": rsaKid]
        jwks = [PublicJWK(kty: "RSA", use: "sig", alg: "RS256", kid: rsaKid, n: n, e: e),
                PublicJWK(kty: "EC", use: "sig", alg: "ES256", kid: ecKid, crv: "P-256", x: p.x, y: p.y)]
        keys = JWTKeyCollection()
        await keys.add(ecdsa: ec, kid: JWKIdentifier(string: ecKid))
        await keys.add(rsa: rsa, digestAlgorithm: .sha256, kid: JWKIdentifier(string: rsaKid))
    }

    private static func thumbprint(_ canonical: String) -> String {
        Base64URL.encode(MPinCrypto.SHA256.hash(Array(canonical.utf8)))
    }

    /// A fresh P-256 key in PEM form.
    static func generateES256PEM() -> String { ES256PrivateKey().pemRepresentation }

    /// A fresh 2048-bit RSA key in PEM form (PKCS#8).
    static func generateRS256PEM() throws -> String {
        try _RSA.Signing.PrivateKey(keySize: .bits2048).pkcs8PEMRepresentation
    }

    /// The compact JWS of `claims`, header `{"alg": alg, "kid": …, "typ": "JWT"}`; `alg` is
    /// one of `algorithms`.
    func sign(_ claims: IDTokenClaims, alg: String) async throws -> String {
        guard let kid = kids[alg] else { throw SetupError.io("no OIDC key for \(alg)") }
        return try await keys.sign(claims, kid: JWKIdentifier(string: kid))
    }
}

/// A public key in a JWK Set (RFC 7517): EC (`crv`, `x`, `y`) or RSA (`n`, `e`).
struct PublicJWK: Codable, Sendable, Equatable {
    var kty: String
    var use: String
    var alg: String
    var kid: String
    var n: String? = nil
    var e: String? = nil
    var crv: String? = nil
    var x: String? = nil
    var y: String? = nil
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
    var oidcRSAKeyPath: String { path + "/oidc-rs256.pem" }

    /// The ES256 signing key's PEM, created (0600, never overwriting) on first use; an existing
    /// file must be private to the owner.
    func loadOrCreateOIDCKey() throws -> String {
        try loadOrCreatePrivate(oidcKeyPath) { OIDCKey.generateES256PEM() }
    }

    /// The RS256 signing key's PEM, made and kept as the ES256 one.
    func loadOrCreateOIDCRSAKey() throws -> String {
        try loadOrCreatePrivate(oidcRSAKeyPath) { try OIDCKey.generateRS256PEM() }
    }

    private func loadOrCreatePrivate(_ path: String, _ make: () throws -> String) throws -> String {
        if !FileManager.default.fileExists(atPath: path) {
            do { try writeNewPrivate(path, try make()) } catch {
                // Another process may have made it first; reading it below decides.
                if !FileManager.default.fileExists(atPath: path) { throw error }
            }
        }
        return try readPrivateFile(path)
    }

    /// Both OIDC keys, ready to sign.
    func loadOIDCKeys() async throws -> OIDCKey {
        try await OIDCKey(es256PEM: try loadOrCreateOIDCKey(), rs256PEM: try loadOrCreateOIDCRSAKey())
    }
}
