package import Foundation

/// What the DVS endpoints keep (docs/MFA.md §14): single-use registration tokens (as hashes)
/// and the enrolled signing keys, each with its own wrong-PIN counter.
package protocol DVSStorage: Sendable {
    /// Stores a DVS registration token for `userID`; false if the hash is already taken.
    func issueDVSToken(tokenHash: String, userID: String, expires: Date) async throws -> Bool
    /// Uses up a live token; the user it was issued to, or nil (unknown, expired, used).
    func useDVSToken(tokenHash: String, now: Date) async throws -> String?
    /// The user of a live, unused token, leaving it unused (the userinfo endpoint, MFA.md §7.4).
    func dvsTokenUser(tokenHash: String, now: Date) async throws -> String?
    /// Enrols a signing key: its signing mpinId, the user and Pa (hex). False when the mpinId is taken.
    func saveSigningKey(mpinID: String, userID: String, publicKey: String, now: Date) async throws -> Bool
    /// The enrolled key of a signing mpinId, or nil.
    func signingKey(mpinID: String) async throws -> SigningKey?
    /// Records a verification's outcome against the key's counter in one transaction: a valid
    /// signature resets it, an invalid one counts, and the `maxAttempts`-th in a row blocks the
    /// key. A blocked key's signatures are never valid again.
    ///
    /// `seen`: the signature, to remember when it is valid (`seenSignature`); a signature whose
    /// key is already remembered is not recorded again. Nil remembers nothing.
    func recordSignatureVerdict(mpinID: String, valid: Bool, seen: SeenSignature?, maxAttempts: Int,
                                now: Date) async throws -> SignatureVerdict
    /// The digest of the valid signature remembered under `key` (docs/SECURITY.md §5), or nil.
    /// Deleted with its user's signing keys (revoke, delete).
    func seenSignature(key: String) async throws -> String?
}

extension DVSStorage {
    /// A verdict that remembers no signature.
    package func recordSignatureVerdict(mpinID: String, valid: Bool, maxAttempts: Int,
                                                              now: Date) async throws -> SignatureVerdict {
        try await recordSignatureVerdict(mpinID: mpinID, valid: valid, seen: nil, maxAttempts: maxAttempts, now: now)
    }
}

/// A signature the platform has seen valid, as it is remembered (docs/MFA.md §14.3): `key` is
/// SHA-256 of the signing mpinId and U (a signature's one random part, which only its signer can
/// make), `digest` SHA-256 of the rest (timestamp, hash, V). Both hex.
package struct SeenSignature: Sendable, Equatable {
    package var key: String
    package var digest: String
    package init(key: String, digest: String) { self.key = key; self.digest = digest }
}

/// An enrolled signing key.
package struct SigningKey: Sendable, Equatable {
    package var userID: String
    package var publicKey: String
    package var blocked: Bool
}

/// What a verification comes to once counted.
package enum SignatureVerdict: Sendable, Equatable { case valid, invalid, blocked, unknownKey }
