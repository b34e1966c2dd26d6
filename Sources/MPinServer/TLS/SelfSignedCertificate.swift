import Crypto
package import Foundation
import SwiftASN1
import X509
#if canImport(Glibc)
import Glibc
#endif

/// A self-signed P-256 certificate for one host name or IP address, for demos and tests
/// (`mpin-server init --self-signed HOST`). It is its own trust anchor: clients name the
/// certificate file as their `cacert`.
package enum SelfSignedCertificate {
    /// The certificate's PEM and the PKCS#8 PEM of its key, valid from an hour ago (clock skew)
    /// for `days` days, with `host` as subject alternative name (IP address or DNS name).
    package static func make(host: String, days: Int = 825, now: Date = Date()) throws -> (certificatePEM: String, keyPEM: String) {
        let key = P256.Signing.PrivateKey()
        let certificateKey = Certificate.PrivateKey(key)
        let name = try DistinguishedName { CommonName(host) }
        let san: GeneralName
        if let ip = ipAddressBytes(host) {
            san = .ipAddress(ASN1OctetString(contentBytes: ArraySlice(ip)))
        } else {
            san = .dnsName(host)
        }
        // A CA that is also the server's own certificate, as `openssl req -x509` makes: OpenSSL
        // and libcurl then accept it both as the `cacert` anchor and as the leaf.
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
            Critical(KeyUsage(digitalSignature: true, keyCertSign: true))
            try ExtendedKeyUsage([.serverAuth])
            SubjectAlternativeNames([san])
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: certificateKey.publicKey,
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(Double(days) * 86_400),
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions,
            issuerPrivateKey: certificateKey)
        return (try certificate.serializeAsPEM().pemString, key.pemRepresentation)
    }

    /// The 4 or 16 bytes of an IPv4 or IPv6 literal, nil for anything else.
    static func ipAddressBytes(_ host: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }

    /// A host name or address a certificate can name: an IP literal, or DNS labels of letters,
    /// digits and hyphens (a leading `*.` allowed).
    package static func isValidHost(_ host: String) -> Bool {
        if ipAddressBytes(host) != nil { return true }
        var name = Substring(host)
        if name.hasPrefix("*.") { name = name.dropFirst(2) }
        guard !name.isEmpty, name.utf8.count <= 253 else { return false }
        return name.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            !label.isEmpty && label.utf8.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-") }
        }
    }
}
