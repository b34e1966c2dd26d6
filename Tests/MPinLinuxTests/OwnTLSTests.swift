import Foundation
import MPinClient
import MPinLinux
import MPinTestSupport
import XCTest

/// PlainHTTPTransport's own TLS (OpenSSL's libssl, no libcurl) against a real TLS server: a
/// Python HTTP/1.1 keep-alive server wrapped in TLS, with throw-away certificates made by the
/// openssl command, bound to 127.0.0.1 on a port the test picks and stopped at the end. The
/// attacker here controls the server: its certificate is self-signed, names another address,
/// or comes from a CA the client was not told to trust, and each must be refused.
final class OwnTLSTests: XCTestCase {
    private var servers: [Process] = []
    private var workDirectory = ""

    override func setUpWithError() throws {
        var template = Array("/tmp/mpin-owntls-XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else { throw XCTSkip("mkdtemp failed") }
        workDirectory = String(cString: created)
    }

    override func tearDown() {
        for server in servers where server.isRunning {
            server.terminate()
            server.waitUntilExit()
        }
        servers = []
        try? FileManager.default.removeItem(atPath: workDirectory)
        super.tearDown()
    }

    /// A self-signed certificate and its key, `NAME.crt` and `NAME.key`, for `subjectAltName`;
    /// its subject is CN=`commonName`, or CN=NAME.
    private func certificate(_ name: String, subjectAltName: String,
                             commonName: String? = nil) throws -> (certificate: String, key: String) {
        let certificate = "\(workDirectory)/\(name).crt", key = "\(workDirectory)/\(name).key"
        let made = try runProcess("/usr/bin/openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                                                       "-nodes", "-keyout", key, "-out", certificate, "-days", "1",
                                                       "-subj", "/CN=\(commonName ?? name)", "-addext", "subjectAltName=\(subjectAltName)"])
        guard made.status == 0 else { throw XCTSkip("openssl req failed; cannot make the test certificates") }
        return (certificate, key)
    }

    /// Answers every GET with 200 and the path, keeping the connection, over TLS with the pair given.
    private static let serverScript = """
    import http.server, ssl, sys
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        def do_GET(self):
            body = self.path.encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        def log_message(self, *args):
            pass
    server = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(sys.argv[2], sys.argv[3])
    server.socket = context.wrap_socket(server.socket, server_side=True)
    server.serve_forever()
    """

    private func startServer(_ pair: (certificate: String, key: String)) throws -> UInt16 {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else { throw XCTSkip("no python3 for the TLS server") }
        let port = unusedLocalPort()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", Self.serverScript, String(port), pair.certificate, pair.key]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        servers.append(process)
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if localPortAcceptsConnections(port) { return port }
            usleep(20_000)
        }
        throw XCTSkip("the TLS test server did not start listening")
    }

    private func transport(caFile: String?) -> PlainHTTPTransport {
        PlainHTTPTransport(configuration: .init(caFile: caFile, connectTimeout: .seconds(5), timeout: .seconds(10)))
    }

    func testConfiguredCAIsTrustedAndTheConnectionIsKept() throws {
        let pair = try certificate("server", subjectAltName: "IP:127.0.0.1")
        let port = try startServer(pair)
        let trusting = transport(caFile: pair.certificate)
        for path in ["/one", "/two", "/three"] {
            let response = try trusting.send(HTTPRequest(method: .get, url: "https://127.0.0.1:\(port)\(path)"))
            XCTAssertEqual(response.status, 200)
            XCTAssertEqual(String(decoding: response.body, as: UTF8.self), path)
        }
        // The router sends it the same way (no libcurl for an https URL to an IP address).
        try withProxyVariables([:]) {
            let routed = LinuxHTTPTransport(configuration: .init(caFile: pair.certificate, timeout: .seconds(10)))
            XCTAssertEqual(try routed.send(HTTPRequest(method: .get, url: "https://127.0.0.1:\(port)/r")).status, 200)
        }
    }

    func testSelfSignedCertificateIsRefusedWithTheSystemCAs() throws {
        let port = try startServer(try certificate("server", subjectAltName: "IP:127.0.0.1"))
        let error = transportError { try transport(caFile: nil).send(HTTPRequest(method: .get, url: "https://127.0.0.1:\(port)/")) }
        guard case .tlsFailure(let host, let detail) = error else { return XCTFail("got \(String(describing: error))") }
        XCTAssertEqual(host, "https://127.0.0.1:\(port)")
        XCTAssertTrue(detail.contains("certificate"), detail)
    }

    func testCertificateFromAnotherCAIsRefused() throws {
        let trusted = try certificate("trusted", subjectAltName: "IP:127.0.0.1")
        let port = try startServer(try certificate("impostor", subjectAltName: "IP:127.0.0.1"))
        let error = transportError {
            try transport(caFile: trusted.certificate).send(HTTPRequest(method: .get, url: "https://127.0.0.1:\(port)/"))
        }
        guard case .tlsFailure(_, let detail) = error else { return XCTFail("got \(String(describing: error))") }
        XCTAssertTrue(detail.contains("certificate verify failed"), detail)
    }

    func testCertificateForAnotherAddressIsRefused() throws {
        // Trusted as a CA, but it names 127.0.0.2 (and a DNS name that looks like the address).
        let pair = try certificate("elsewhere", subjectAltName: "IP:127.0.0.2,DNS:127.0.0.1")
        let port = try startServer(pair)
        let error = transportError {
            try transport(caFile: pair.certificate).send(HTTPRequest(method: .get, url: "https://127.0.0.1:\(port)/"))
        }
        guard case .tlsFailure(_, let detail) = error else { return XCTFail("got \(String(describing: error))") }
        XCTAssertTrue(detail.contains("subject name does not match"), detail)
    }

    /// `cacert` may hold several self-signed certificates of one subject (the old and the new
    /// one across a certificate change, as `init --self-signed` makes them): the one the server
    /// presents is trusted (libcurl's partial chains), while another of the same subject that
    /// is not in the file, as an impostor would make it, is still refused.
    func testAnyOfSeveralTrustedCertificatesOfOneSubjectIsAcceptedAndNoOther() throws {
        let old = try certificate("old", subjectAltName: "IP:127.0.0.1", commonName: "127.0.0.1")
        let new = try certificate("new", subjectAltName: "IP:127.0.0.1", commonName: "127.0.0.1")
        let impostor = try certificate("impostor", subjectAltName: "IP:127.0.0.1", commonName: "127.0.0.1")
        let both = "\(workDirectory)/both.pem"
        let pem = try String(contentsOfFile: old.certificate, encoding: .utf8) + String(contentsOfFile: new.certificate, encoding: .utf8)
        try pem.write(toFile: both, atomically: true, encoding: .utf8)
        let trusting = transport(caFile: both)
        let servingNew = try startServer(new)
        XCTAssertEqual(try trusting.send(HTTPRequest(method: .get, url: "https://127.0.0.1:\(servingNew)/n")).status, 200)
        let servingImpostor = try startServer(impostor)
        let error = transportError { try trusting.send(HTTPRequest(method: .get, url: "https://127.0.0.1:\(servingImpostor)/i")) }
        guard case .tlsFailure(_, let detail) = error else { return XCTFail("got \(String(describing: error))") }
        XCTAssertTrue(detail.contains("certificate verify failed"), detail)
    }

    func testUnreadableCAFileIsATLSFailure() throws {
        let port = try startServer(try certificate("server", subjectAltName: "IP:127.0.0.1"))
        let error = transportError {
            try transport(caFile: "/nonexistent/ca.pem").send(HTTPRequest(method: .get, url: "https://127.0.0.1:\(port)/"))
        }
        guard case .tlsFailure(_, let detail) = error else { return XCTFail("got \(String(describing: error))") }
        XCTAssertTrue(detail.contains("/nonexistent/ca.pem"), detail)
    }

    /// A server that accepts the connection and never answers the handshake: the connect
    /// timeout bounds connect and handshake together.
    func testSilentServerTimesOutWithinTheConnectTimeout() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0 }
        }
        guard bound, listen(listener, 4) == 0 else { throw XCTSkip("no listening socket") }
        let port = UInt16(bigEndian: address.sin_port)
        let silent = PlainHTTPTransport(configuration: .init(connectTimeout: .milliseconds(300), timeout: .seconds(10)))
        let started = Date()
        let error = transportError { try silent.send(HTTPRequest(method: .get, url: "https://127.0.0.1:\(port)/")) }
        guard case .timedOut = error else { return XCTFail("got \(String(describing: error))") }
        XCTAssertLessThan(Date().timeIntervalSince(started), 3)
    }
}
