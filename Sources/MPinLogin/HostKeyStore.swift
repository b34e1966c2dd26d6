import MPinClient
import MPinCrypto
import MPinJSON
import MPinWire

/// This host's key for access numbers (PROTOCOL.md §5.8): a Schnorr key the host makes once,
/// its secret in the secure storage (`host-key`, hex, 0600 in the root-owned store), never
/// logged; and the certificates backends gave its public half (`host-certificates` in the
/// non-secure storage, `{"backend URL": "certificate"}`: useless without the secret). Made by
/// `mpinctl link` and `mpinctl register`, or by the first device login that finds none.
package enum HostKeyStore {
    package static let secretName = "host-key"
    package static let certificatesDocument = "host-certificates"

    /// The host key, made and kept if there is none yet (or the kept one is not a valid key).
    package static func loadOrCreate(_ storage: any SecureStorage) throws -> (secretKey: [UInt8], publicKey: [UInt8]) {
        if let text = try storage.readText(secretName), let secret = Hex.decode(trimmed(text)), secret.count == 32,
           let key = try? Schnorr.publicKey(secretKey: secret) {
            return (secret, key)
        }
        let pair = try Schnorr.generateKeyPair()
        try storage.writeText(secretName, Hex.encode(pair.secretKey))
        return pair
    }

    /// The certificate kept for `backend`, or empty.
    package static func certificate(for backend: String, in storage: any Storage) -> String {
        guard let bytes = try? storage.read(certificatesDocument), case .object(let members)? = try? JSONParser().parse(bytes) else {
            return ""
        }
        return members.first { $0.key == backend }?.value.stringValue ?? ""
    }

    /// Keeps `certificate` for `backend` (the others stay).
    package static func setCertificate(_ certificate: String, for backend: String, in storage: any Storage) throws {
        var members: [(key: String, value: JSONValue)] = []
        if let bytes = try storage.read(certificatesDocument), case .object(let old)? = try? JSONParser().parse(bytes) {
            members = old.filter { $0.key != backend }
        }
        members.append((key: backend, value: .string(certificate)))
        try storage.write(certificatesDocument, JSONValue.object(members).serialized)
    }

    /// `text` without spaces, tabs and line ends (a key or certificate pasted or read back).
    package static func trimmed(_ text: String) -> String {
        String(text.unicodeScalars.filter { $0 != "\n" && $0 != " " && $0 != "\r" && $0 != "\t" })
    }
}
