import Foundation
import MPinClient
import MPinLinux
import MPinTestSupport
import XCTest

/// TLS against a real TLS server: `openssl s_server` with a throw-away self-signed certificate
/// for IP 127.0.0.1, bound to 127.0.0.1 on a port the test picks, killed at the end.
final class CurlTLSTests: XCTestCase {
    private var server: Process?
    private var workDirectory: String?

    override func tearDown() {
        if let server, server.isRunning {
            server.terminate()
            server.waitUntilExit()
        }
        server = nil
        if let workDirectory { try? FileManager.default.removeItem(atPath: workDirectory) }
        super.tearDown()
    }

    private func openssl() throws -> String {
        for path in ["/usr/bin/openssl", "/usr/local/bin/openssl"] where FileManager.default.isExecutableFile(atPath: path) {
            return path
        }
        throw XCTSkip("no openssl command to run a TLS test server")
    }

    private func run(_ executable: String, _ arguments: [String]) throws {
        guard try runProcess(executable, arguments).status == 0 else {
            throw XCTSkip("openssl \(arguments.first ?? "") failed; cannot build the TLS test server")
        }
    }

    /// Starts the server and returns its port and the certificate's path.
    private func startTLSServer() throws -> (port: UInt16, certificate: String) {
        let tool = try openssl()
        var template = Array("/tmp/mpin-tls-XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else { throw XCTSkip("mkdtemp failed") }
        let directory = String(cString: created)
        workDirectory = directory
        let certificate = directory + "/cert.pem", key = directory + "/key.pem"
        try run(tool, ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                       "-keyout", key, "-out", certificate, "-days", "1", "-subj", "/CN=127.0.0.1",
                       "-addext", "subjectAltName=IP:127.0.0.1"])
        let port = unusedLocalPort()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = ["s_server", "-accept", "127.0.0.1:\(port)", "-cert", certificate, "-key", key,
                             "-www", "-quiet"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        server = process
        // Ready when a plain TCP connect succeeds.
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            if localPortAcceptsConnections(port) { return (port, certificate) }
            usleep(20_000)
        }
        throw XCTSkip("openssl s_server did not start listening")
    }

    func testUntrustedCertificateIsRefusedAndTheConfiguredCAIsTrusted() throws {
        let (port, certificate) = try startTLSServer()
        let url = "https://127.0.0.1:\(port)/"

        // Verification is on: a self-signed certificate the system does not trust fails.
        let error = transportError {
            try CurlHTTPTransport(configuration: .init(timeout: .seconds(5))).send(HTTPRequest(method: .get, url: url))
        }
        guard case .tlsFailure(let host, let detail) = error else { return XCTFail("got \(String(describing: error))") }
        XCTAssertEqual(host, "https://127.0.0.1:\(port)")
        XCTAssertTrue(detail.lowercased().contains("certificate"), detail)

        // The same server is accepted once its certificate is the configured CA.
        let trusting = CurlHTTPTransport(configuration: .init(caFile: certificate, timeout: .seconds(5)))
        let response = try trusting.send(HTTPRequest(method: .get, url: url))
        XCTAssertEqual(response.status, 200)

        // The certificate names 127.0.0.1 only: reaching it as "localhost" fails host verification.
        let mismatch = transportError { try trusting.send(HTTPRequest(method: .get, url: "https://localhost:\(port)/")) }
        guard case .tlsFailure = mismatch else { return XCTFail("got \(String(describing: mismatch))") }
    }

    func testMissingCAFileIsATLSFailure() throws {
        let (port, _) = try startTLSServer()
        let transport = CurlHTTPTransport(configuration: .init(caFile: "/nonexistent/ca.pem", timeout: .seconds(5)))
        let error = transportError { try transport.send(HTTPRequest(method: .get, url: "https://127.0.0.1:\(port)/")) }
        guard case .tlsFailure = error else { return XCTFail("got \(String(describing: error))") }
    }
}
