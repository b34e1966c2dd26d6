import MPinClient
import MPinLogin
import MPinTestSupport
import XCTest

/// The host key for access numbers (PROTOCOL.md §5.8): made once and kept in the secure
/// storage; the backends' certificates kept one per backend in the non-secure storage.
final class HostKeyStoreTests: XCTestCase {
    func testTheKeyIsMadeOnceAndKeptInTheSecureStorage() throws {
        let secure = MemoryStorage()
        let first = try HostKeyStore.loadOrCreate(secure)
        XCTAssertEqual(first.secretKey.count, 32)
        XCTAssertEqual(first.publicKey.count, 65)
        let again = try HostKeyStore.loadOrCreate(secure)
        XCTAssertEqual(again.publicKey, first.publicKey, "the kept key is used again")
        XCTAssertEqual(try secure.read(HostKeyStore.secretName)?.count, 64, "the secret as 64 hex digits")
        // A damaged value is replaced by a new key rather than failing every login.
        try secure.writeText(HostKeyStore.secretName, "zz")
        let replaced = try HostKeyStore.loadOrCreate(secure)
        XCTAssertNotEqual(replaced.publicKey, first.publicKey)
    }

    func testCertificatesAreKeptPerBackend() throws {
        let state = MemoryStorage()
        XCTAssertEqual(HostKeyStore.certificate(for: "https://a", in: state), "")
        try HostKeyStore.setCertificate("1.aa", for: "https://a", in: state)
        try HostKeyStore.setCertificate("2.bb", for: "https://b", in: state)
        try HostKeyStore.setCertificate("3.cc", for: "https://a", in: state)
        XCTAssertEqual(HostKeyStore.certificate(for: "https://a", in: state), "3.cc")
        XCTAssertEqual(HostKeyStore.certificate(for: "https://b", in: state), "2.bb")
        try state.writeText(HostKeyStore.certificatesDocument, "not json")
        XCTAssertEqual(HostKeyStore.certificate(for: "https://a", in: state), "", "a damaged document is no certificate")
    }
}
