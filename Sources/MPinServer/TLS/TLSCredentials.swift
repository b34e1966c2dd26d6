import Crypto
package import Foundation
import MPinPOSIX
package import NIOSSL
import SwiftASN1
import X509
#if canImport(Glibc)
import Glibc
#endif

/// Where the server's certificate (PEM, leaf first, then any intermediates) and private key
/// (PEM) are. `serve --tls-cert/--tls-key`, or `tlsCertificate`/`tlsKey` in config.json.
package struct TLSFiles: Sendable, Equatable {
    package var certificatePath: String
    package var keyPath: String

    package init(certificatePath: String, keyPath: String) {
        self.certificatePath = certificatePath
        self.keyPath = keyPath
    }
}

/// Why a certificate or key was refused, at start or at a reload. Names the file; never holds
/// key material.
package enum TLSSetupError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file is missing or cannot be read (path, reason).
    case unreadable(String, String)
    /// The key file grants any access to group or others (path, its mode).
    case keyNotPrivate(String, mode: UInt32)
    /// The file holds no certificate / no usable key (path, reason).
    case invalid(String, String)
    /// The certificate's public key is not the key's (certificate path, key path).
    case keyMismatch(String, String)

    package var description: String {
        switch self {
        case .unreadable(let p, let why): return "\(p): cannot read: \(why)"
        case .keyNotPrivate(let p, let mode):
            return "\(p): the private key is accessible by group or others (mode \(String(mode, radix: 8))); "
                + "run chmod 600 on it"
        case .invalid(let p, let why): return "\(p): \(why)"
        case .keyMismatch(let cert, let key): return "\(cert): the certificate does not match the private key \(key)"
        }
    }
}

/// A certificate and key read from `TLSFiles`, checked, and made into a server `NIOSSLContext`
/// that accepts TLS 1.2 and 1.3 only.
package struct TLSCredentials: Sendable {
    /// The context new connections are set up with.
    package let context: NIOSSLContext
    /// The leaf certificate's end of validity (logged at start and reload).
    package let notValidAfter: Date
    /// SHA-256 of the leaf certificate's DER, hex (logged, so that a reload can be confirmed).
    package let fingerprint: String

    /// Reads and checks both files: the key file must be a regular file that neither group nor
    /// others can access, and the first certificate must carry the key's public key.
    package static func load(_ files: TLSFiles) throws(TLSSetupError) -> TLSCredentials {
        let keyPEM = try readKeyFile(files.keyPath)
        let certPEM = try readFile(files.certificatePath)

        // The certificate chain: every PEM block of the file, leaf first.
        let chain: [Certificate]
        do {
            chain = try PEMDocument.parseMultiple(pemString: certPEM)
                .filter { $0.discriminator == "CERTIFICATE" }
                .map { try Certificate(derEncoded: $0.derBytes) }
        } catch {
            throw .invalid(files.certificatePath, "not a PEM certificate")
        }
        guard let leaf = chain.first else { throw .invalid(files.certificatePath, "holds no PEM certificate") }

        // The key, once for the comparison (swift-certificates: P-256/384/521, RSA, Ed25519) and
        // once for BoringSSL. The errors of both parsers are not repeated: they could quote bytes.
        let privateKey: Certificate.PrivateKey
        do { privateKey = try Certificate.PrivateKey(pemEncoded: keyPEM) } catch {
            throw .invalid(files.keyPath, "not an unencrypted PEM private key (PKCS#8, SEC1 or RSA)")
        }
        guard privateKey.publicKey == leaf.publicKey else { throw .keyMismatch(files.certificatePath, files.keyPath) }

        let sslChain: [NIOSSLCertificate], sslKey: NIOSSLPrivateKey
        do {
            sslChain = try chain.map { c -> NIOSSLCertificate in
                var serializer = DER.Serializer()
                try serializer.serialize(c)
                return try NIOSSLCertificate(bytes: serializer.serializedBytes, format: .der)
            }
        } catch {
            throw .invalid(files.certificatePath, "BoringSSL cannot load the certificate")
        }
        do { sslKey = try NIOSSLPrivateKey(bytes: Array(keyPEM.utf8), format: .pem) } catch {
            throw .invalid(files.keyPath, "BoringSSL cannot load the private key")
        }

        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: sslChain.map { .certificate($0) }, privateKey: .privateKey(sslKey))
        configuration.minimumTLSVersion = .tlsv12
        configuration.maximumTLSVersion = .tlsv13
        let context: NIOSSLContext
        do { context = try NIOSSLContext(configuration: configuration) } catch {
            throw .invalid(files.certificatePath, "cannot make a TLS context: \(error)")
        }
        let der = (try? sslChain[0].toDERBytes()) ?? []
        return TLSCredentials(context: context, notValidAfter: leaf.notValidAfter,
                              fingerprint: SHA256.hash(data: der).map { String(format: "%02x", $0) }.joined())
    }

    /// The key file's text, after checking that it is a regular file private to its owner.
    /// The mode is checked on the open descriptor, so the file checked is the file read.
    private static func readKeyFile(_ path: String) throws(TLSSetupError) -> String {
        try readFile(path, privateToOwner: true)
    }

    /// A regular file's text; with `privateToOwner`, refused when group or others have any access.
    private static func readFile(_ path: String, privateToOwner: Bool = false) throws(TLSSetupError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else { throw .unreadable(path, String(cString: strerror(errno))) }
        defer { close(fd) }
        guard let status = FileStatus(descriptor: fd) else { throw .unreadable(path, String(cString: strerror(errno))) }
        guard status.isRegularFile else { throw .unreadable(path, "not a regular file") }
        if privateToOwner, status.mode & 0o077 != 0 { throw .keyNotPrivate(path, mode: status.permissions) }
        return try readAll(fd, path, sizeHint: Int(status.size))
    }

    /// Reads at most 1 MiB (a certificate chain or key is a few kilobytes).
    private static func readAll(_ fd: Int32, _ path: String, sizeHint: Int) throws(TLSSetupError) -> String {
        var bytes: [UInt8] = []
        // Reserved at once, so that growing does not leave copies of the key behind.
        bytes.reserveCapacity(min(max(sizeHint, 0), 1 << 20) + 1)
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        // The buffers may hold key material: wiped however this ends. (The returned text is the
        // caller's, and BoringSSL keeps its own copy of the key for the context's lifetime.)
        // explicit_bzero, as SecretBytes wipes: a plain loop of stores into memory that is freed
        // next may be removed by the optimiser.
        defer {
            bytes.withUnsafeMutableBytes { if let base = $0.baseAddress { explicit_bzero(base, $0.count) } }
            buffer.withUnsafeMutableBytes { if let base = $0.baseAddress { explicit_bzero(base, $0.count) } }
        }
        while true {
            let n: Int
            do {
                n = try retryingOnInterrupt { buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) } }
            } catch {
                throw .unreadable(path, String(cString: strerror(error.code)))
            }
            if n == 0 { break }
            bytes += buffer[0..<n]
            guard bytes.count <= 1 << 20 else { throw .invalid(path, "larger than 1 MiB") }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .invalid(path, "not PEM text") }
        return text
    }
}
