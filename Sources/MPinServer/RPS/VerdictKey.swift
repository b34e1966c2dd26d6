import Foundation
import MPinCrypto
import MPinWire

/// The key that signs login verdicts (PROTOCOL.md §4.5.1): a Schnorr key on G1, its secret in
/// `DIR/verdict.key` (hex, 0600), made by `init` or at the first start that needs it, and
/// shared by every node that serves the same data directory (`prepareForNodes`). Hosts pin the
/// public half (`verdictKey` in clientSettings) when they register or link a user, and from
/// then on believe an "OK" or a "blocked" only with this key's signature.
struct VerdictKey: Sendable {
    private let secretKey: [UInt8]
    let publicKey: [UInt8]
    let publicKeyHex: String

    init(secretKey: [UInt8]) throws(MPinCryptoError) {
        self.secretKey = secretKey
        publicKey = try Schnorr.publicKey(secretKey: secretKey)
        publicKeyHex = Hex.encode(publicKey)
    }

    /// A certificate of a host key (PROTOCOL.md §5.8) good until `expires` (seconds since the
    /// epoch); nil when signing failed.
    func certify(hostKey: [UInt8], expires: Int) -> String? {
        try? HostCredential.certificate(hostKey: hostKey, expires: expires, secretKey: secretKey)
    }

    /// A key of its own, for servers built in tests without a data directory.
    static func generate() throws(MPinCryptoError) -> VerdictKey {
        try VerdictKey(secretKey: Schnorr.generateKeyPair().secretKey)
    }

    /// The signature (hex) of a verdict, or nil when the client bound no nonce to the login (the
    /// original SDK binds none) or signing failed; a missing signature only means that a host
    /// which pinned this key refuses the answer.
    func sign(nonce: [UInt8]?, mpinIDHex: String, userID: String, status: Int, context: String) -> String? {
        guard let nonce, let mpinID = Hex.decode(mpinIDHex) else { return nil }
        return try? Verdict.sign(nonce: nonce, mpinID: mpinID, userID: userID, status: status, context: context,
                                 secretKey: secretKey)
    }
}

extension DataDirectory {
    var verdictKeyPath: String { path + "/verdict.key" }

    /// The verdict key, created (0600, never overwriting) on first use; an existing file must
    /// be private to the owner and hold a valid key.
    func loadOrCreateVerdictKey() throws -> VerdictKey {
        if !FileManager.default.fileExists(atPath: verdictKeyPath) {
            var secret = try Schnorr.generateKeyPair().secretKey
            defer { secret.wipe() }
            do { try writeNewPrivate(verdictKeyPath, Hex.encode(secret) + "\n") } catch {
                // Another process may have made it first; reading it below decides.
                if !FileManager.default.fileExists(atPath: verdictKeyPath) { throw error }
            }
        }
        let text = try readPrivateFile(verdictKeyPath).trimmingCharacters(in: .whitespacesAndNewlines)
        guard var secret = Hex.decode(text), secret.count == 32 else { throw SetupError.corruptFile(verdictKeyPath) }
        defer { secret.wipe() }
        do { return try VerdictKey(secretKey: secret) } catch { throw SetupError.corruptFile(verdictKeyPath) }
    }

    /// The verdict key's public half (hex), made if there is none yet.
    package func verdictPublicKey() throws -> String { try loadOrCreateVerdictKey().publicKeyHex }

    /// The longest an administrator's certificate of a host key may last (`host certify`).
    package static let maxHostCertificateDays = 365

    /// A certificate of the host key `hostKeyHex` (what `mpinctl host-key` prints on the host),
    /// good for `days` (PROTOCOL.md §5.8): the administrator's word that the key is one of their
    /// hosts', so that its first device login already counts as a host's and not in the
    /// anonymous bucket a flood may have spent. The host checks it against the verdict key it
    /// pinned before keeping it (`mpinctl host-certificate`); each approved login renews it.
    package func certifyHostKey(_ hostKeyHex: String, days: Int) throws -> String {
        guard (1...Self.maxHostCertificateDays).contains(days) else { throw SetupError.invalidHostCertificateDays(days) }
        guard let hostKey = HostCredential.publicKey(fromHex: hostKeyHex.lowercased()) else { throw SetupError.invalidHostKey }
        let expires = Int(Date().timeIntervalSince1970) + days * 86_400
        guard let certificate = try loadOrCreateVerdictKey().certify(hostKey: hostKey, expires: expires) else {
            throw SetupError.invalidHostKey
        }
        return certificate
    }
}
