import Foundation
import MPinPOSIX
import MPinServer
import MPinTestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// mpin-server's own TLS: the checks on the certificate and key files at start and at reload,
/// and what a TLS client (openssl s_client) is served.
final class TLSTests: XCTestCase {
    private var dir = ""

    override func setUpWithError() throws {
        dir = NSTemporaryDirectory() + "mpin-tls-" + UUID().uuidString
        XCTAssertEqual(mkdir(dir, 0o700), 0)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: dir) }

    /// Writes a fresh self-signed pair as NAME.crt / NAME.key (key mode `keyMode`).
    @discardableResult
    private func writePair(_ name: String, host: String = "127.0.0.1", keyMode: mode_t = 0o600) throws -> TLSFiles {
        let made = try SelfSignedCertificate.make(host: host)
        let files = TLSFiles(certificatePath: "\(dir)/\(name).crt", keyPath: "\(dir)/\(name).key")
        try write(made.certificatePEM, to: files.certificatePath, mode: 0o644)
        try write(made.keyPEM, to: files.keyPath, mode: keyMode)
        return files
    }

    private func write(_ text: String, to path: String, mode: mode_t) throws {
        unlink(path)
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(text.utf8)))
        XCTAssertEqual(chmod(path, mode), 0)
    }

    func testAMatchingPrivatePairLoads() throws {
        let files = try writePair("good")
        let credentials = try TLSCredentials.load(files)
        XCTAssertEqual(credentials.fingerprint.count, 64)
        XCTAssertGreaterThan(credentials.notValidAfter, Date().addingTimeInterval(300 * 86_400))
    }

    func testAKeyReadableByGroupOrOthersIsRefusedNamingTheFile() throws {
        for mode: mode_t in [0o640, 0o604, 0o660, 0o644] {
            let files = try writePair("open\(String(mode, radix: 8))", keyMode: mode)
            XCTAssertThrowsError(try TLSCredentials.load(files)) { error in
                XCTAssertEqual(error as? TLSSetupError, .keyNotPrivate(files.keyPath, mode: UInt32(mode)))
                let text = String(describing: error)
                XCTAssertTrue(text.contains(files.keyPath) && text.contains("group or others"), text)
            }
        }
    }

    func testACertificateThatDoesNotMatchTheKeyIsRefused() throws {
        let a = try writePair("a"), b = try writePair("b")
        let mixed = TLSFiles(certificatePath: a.certificatePath, keyPath: b.keyPath)
        XCTAssertThrowsError(try TLSCredentials.load(mixed)) { error in
            XCTAssertEqual(error as? TLSSetupError, .keyMismatch(a.certificatePath, b.keyPath))
            XCTAssertTrue(String(describing: error).contains("does not match"))
        }
    }

    func testMissingAndMalformedFilesAreRefusedNamingTheFile() throws {
        let good = try writePair("good")
        let missing = TLSFiles(certificatePath: good.certificatePath, keyPath: dir + "/none.key")
        XCTAssertThrowsError(try TLSCredentials.load(missing)) { error in
            guard case .unreadable(let p, _)? = error as? TLSSetupError else { return XCTFail("\(error)") }
            XCTAssertEqual(p, missing.keyPath)
        }
        try write("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n", to: dir + "/bad.crt", mode: 0o644)
        XCTAssertThrowsError(try TLSCredentials.load(TLSFiles(certificatePath: dir + "/bad.crt", keyPath: good.keyPath))) { error in
            guard case .invalid(let p, _)? = error as? TLSSetupError else { return XCTFail("\(error)") }
            XCTAssertEqual(p, self.dir + "/bad.crt")
        }
        try write("no key here\n", to: dir + "/bad.key", mode: 0o600)
        XCTAssertThrowsError(try TLSCredentials.load(TLSFiles(certificatePath: good.certificatePath, keyPath: dir + "/bad.key"))) { error in
            guard case .invalid(let p, _)? = error as? TLSSetupError else { return XCTFail("\(error)") }
            XCTAssertEqual(p, self.dir + "/bad.key")
        }
    }

    func testTheServerRefusesToStartWithAnOpenKey() async throws {
        let data = dir + "/data"
        try DataDirectory.initialise(path: data, autoActivate: true)
        let files = try writePair("open", keyMode: 0o644)
        do {
            _ = try await MPinServer(dataDirectory: data, port: 0, tls: files)
            XCTFail("started with a key readable by others")
        } catch let error as TLSSetupError {
            XCTAssertEqual(error, .keyNotPrivate(files.keyPath, mode: 0o644))
        }
    }

    func testInitSelfSignedNamesTheFilesInTheConfig() async throws {
        let data = dir + "/data"
        let directory = try DataDirectory.initialise(path: data, autoActivate: true)
        let certificate = try directory.addSelfSignedCertificate(host: "127.0.0.1")
        XCTAssertEqual(certificate, data + "/tls.crt")
        XCTAssertEqual(FileStatus(path: data + "/tls.key")?.permissions, 0o600)
        let files = try directory.tlsFiles(try directory.loadConfig())
        XCTAssertEqual(files, TLSFiles(certificatePath: data + "/tls.crt", keyPath: data + "/tls.key"))
        // A second time refuses to overwrite the pair.
        XCTAssertThrowsError(try directory.addSelfSignedCertificate(host: "127.0.0.1"))
        let server = try await MPinServer(dataDirectory: data, port: 0)
        XCTAssertEqual(server.scheme, "https")
    }

    /// A reload swaps what new connections get; a failed reload keeps the current pair.
    func testReloadSwapsTheCertificateAndAFailedReloadKeepsIt() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl") else {
            throw XCTSkip("openssl not installed")
        }
        let data = dir + "/data"
        try DataDirectory.initialise(path: data, autoActivate: true)
        let files = try writePair("live")
        let server = try await MPinServer(dataDirectory: data, port: 0, tls: files)
        let running = try await server.start()
        defer { Task { await running.stop() } }
        let first = try XCTUnwrap(server.tlsCertificateFingerprint)
        XCTAssertEqual(try servedFingerprint(port: running.port, version: "-tls1_2"), first)
        XCTAssertEqual(try servedFingerprint(port: running.port, version: "-tls1_3"), first)
        XCTAssertNil(try? servedFingerprint(port: running.port, version: "-tls1_1"), "TLS 1.1 accepted")

        // New pair in place: new connections get it.
        let fresh = try SelfSignedCertificate.make(host: "127.0.0.1")
        try write(fresh.certificatePEM, to: files.certificatePath, mode: 0o644)
        try write(fresh.keyPEM, to: files.keyPath, mode: 0o600)
        try server.reloadTLS()
        let second = try XCTUnwrap(server.tlsCertificateFingerprint)
        XCTAssertNotEqual(first, second)
        XCTAssertEqual(try servedFingerprint(port: running.port, version: "-tls1_3"), second)

        // A certificate that does not match the key: refused, the second pair stays.
        try write(try SelfSignedCertificate.make(host: "127.0.0.1").certificatePEM, to: files.certificatePath, mode: 0o644)
        XCTAssertThrowsError(try server.reloadTLS()) { XCTAssertEqual($0 as? TLSSetupError, .keyMismatch(files.certificatePath, files.keyPath)) }
        XCTAssertEqual(server.tlsCertificateFingerprint, second)
        XCTAssertEqual(try servedFingerprint(port: running.port, version: "-tls1_2"), second)
        await running.stop()
    }

    /// SHA-256 of the certificate a TLS handshake with `openssl s_client VERSION` is shown.
    private func servedFingerprint(port: Int, version: String) throws -> String {
        let script = "openssl s_client -connect 127.0.0.1:\(port) \(version) </dev/null 2>/dev/null"
            + " | openssl x509 -noout -fingerprint -sha256"
        let result = try runProcess("/bin/sh", ["-c", script])
        let text = result.stdout
        guard result.status == 0, let eq = text.firstIndex(of: "=") else { throw CocoaError(.fileReadUnknown) }
        return text[text.index(after: eq)...].filter { $0 != ":" && !$0.isWhitespace }.lowercased()
    }
}
