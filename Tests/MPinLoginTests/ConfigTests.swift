import MPinLogin
import XCTest

final class ConfigTests: XCTestCase {
    func testParsesTheDocumentedExample() throws {
        let root = URL(fileURLWithPath: "\(#filePath)").deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("Config/mpin.conf"), encoding: .utf8)
        let c = try LoginConfig.parse(text, file: "Config/mpin.conf")
        XCTAssertEqual(c.backend, "https://mpin.example.org")
        XCTAssertEqual(c.store, "/var/lib/mpin")
        XCTAssertEqual(c.timeout, 10)
        XCTAssertEqual(c.connectTimeout, 2)
        XCTAssertEqual(c.backends, ["https://mpin.example.org"])
        XCTAssertEqual(c.prompt, "M-Pin PIN: ")
    }

    func testValuesAndDefaults() throws {
        let c = try LoginConfig.parse("""
            # comment
            backend = http://127.0.0.1:8005
              timeout=2.5
            trusted_domains = example.org, , example.com
            prompt = PIN:
            """, file: "t.conf")
        XCTAssertEqual(c.backend, "http://127.0.0.1:8005")
        XCTAssertEqual(c.timeout, 2.5)
        XCTAssertEqual(c.trustedDomains, ["example.org", "example.com"])
        XCTAssertEqual(c.prompt, "PIN: ")
        XCTAssertEqual(c.rpsPrefix, "rps")
        XCTAssertEqual(c.store, "/var/lib/mpin")
    }

    /// The parser works on bytes: CRLF line ends (a file edited on Windows) parse, and UTF-8
    /// values come through unchanged.
    func testCRLFLinesAndUTF8Values() throws {
        let c = try LoginConfig.parse("# é\r\nbackend = http://127.0.0.1:8005\r\nprompt = Código PIN:\r\n\r\ntimeout = 4\r\n",
                                      file: "crlf.conf")
        XCTAssertEqual(c.backend, "http://127.0.0.1:8005")
        XCTAssertEqual(c.prompt, "Código PIN: ")
        XCTAssertEqual(c.timeout, 4)
        XCTAssertThrowsError(try LoginConfig.parse("backend = http://127.0.0.1:1\r\nbogus\r\n", file: "crlf.conf")) { error in
            XCTAssertEqual((error as? ConfigError)?.line, 2)
        }
    }

    func testErrorsNameFileAndLine() {
        let cases: [(String, Int, String)] = [
            ("backend = ftp://x", 1, "backend must be"),
            ("\n\nbogus = 1", 3, "unknown key \"bogus\""),
            ("timeout = 0", 1, "timeout must be"),
            ("timeout = ten", 1, "timeout must be"),
            ("store = relative/path", 1, "absolute path"),
            ("backend = http://a\nbackend = http://b", 2, "set twice"),
            ("just words", 1, "expected key = value"),
        ]
        for (text, line, fragment) in cases {
            XCTAssertThrowsError(try LoginConfig.parse(text, file: "/etc/mpin/mpin.conf"), text) { error in
                let e = error as? ConfigError
                XCTAssertEqual(e?.line, line, text)
                XCTAssertTrue(e?.description.hasPrefix("/etc/mpin/mpin.conf:\(line): ") == true, "\(String(describing: e))")
                XCTAssertTrue(e?.message.contains(fragment) == true, "\(String(describing: e)) lacks \(fragment)")
            }
        }
    }

    func testModuleOptions() throws {
        let o = ModuleOptions(arguments: ["config=/tmp/x.conf", "nouserok", "use_first_pass", "debug",
                                          "backend=http://127.0.0.1:9", "timeout=3", "frobnicate", "nouserok=1",
                                          "helper=/opt/mpin/mpin-pam-helper", "helper", "helper_socket=/run/x.sock"])
        XCTAssertEqual(o.configPath, "/tmp/x.conf")
        // helper=PATH is pam_mpin.so's (which helper it runs); the helper accepts it silently.
        XCTAssertEqual(o.helperPath, "/opt/mpin/mpin-pam-helper")
        // So is helper_socket=PATH (the resident helper it connects to first).
        XCTAssertEqual(o.helperSocket, "/run/x.sock")
        XCTAssertTrue(o.nouserok && o.useFirstPass && o.debug)
        XCTAssertFalse(o.tryFirstPass)
        XCTAssertEqual(o.unknown, ["frobnicate", "nouserok=1", "helper"])
        let c = try o.loadConfig { path in path == "/tmp/x.conf" ? "backend = http://a\nprompt = Code:" : nil }
        XCTAssertEqual(c.backend, "http://127.0.0.1:9", "module arguments override the file")
        XCTAssertEqual(c.timeout, 3)
        XCTAssertEqual(c.prompt, "Code: ")
        XCTAssertThrowsError(try o.loadConfig { _ in nil }, "a named config file must exist")
        XCTAssertNoThrow(try ModuleOptions(arguments: []).loadConfig { _ in nil }, "the default file may be absent")
        XCTAssertThrowsError(try ModuleOptions(arguments: ["timeout=-1"]).loadConfig { _ in nil })
    }
}
