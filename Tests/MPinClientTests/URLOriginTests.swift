import MPinClient
import XCTest

/// The one URL splitter every layer uses (trust checks, messages, both transports).
final class URLOriginTests: XCTestCase {
    private func parsed(_ url: String, file: StaticString = #filePath, line: UInt = #line) -> URLOrigin? {
        switch URLOrigin.parse(url) {
        case .success(let origin): return origin
        case .failure(let error):
            XCTFail("\(url): \(error.reason)", file: file, line: line)
            return nil
        }
    }

    func testPartsOfAbsoluteURLs() throws {
        let a = try XCTUnwrap(parsed("HTTPS://User:Secret@MFA.Example.org:8443/rps/pass1?regOTT=abc#frag"))
        XCTAssertEqual(a.scheme, "https")
        XCTAssertEqual(a.host, "mfa.example.org")
        XCTAssertEqual(a.port, 8443)
        XCTAssertTrue(a.hasUserInfo)
        XCTAssertEqual(a.target, "/rps/pass1?regOTT=abc")
        XCTAssertEqual(a.path, "/rps/pass1")
        XCTAssertEqual(a.display, "https://mfa.example.org:8443")

        let b = try XCTUnwrap(parsed("http://[::1]:8005"))
        XCTAssertEqual(b.host, "::1")
        XCTAssertEqual(b.display, "http://[::1]:8005")
        XCTAssertEqual(b.target, "/")
        XCTAssertFalse(b.hasUserInfo)

        let c = try XCTUnwrap(parsed("http://127.0.0.1?x=1"))
        XCTAssertNil(c.port)
        XCTAssertEqual(c.target, "/?x=1")
        XCTAssertEqual(c.path, "/")
    }

    /// `mpinctl doctor` lets plain http pass only to this machine: the whole host decides, not
    /// a prefix of the text after the scheme.
    func testLoopbackIsTheWholeHost() {
        for url in ["http://127.0.0.1:8005", "http://localhost", "http://LOCALHOST:80/x", "http://[::1]:8005/rps"] {
            XCTAssertEqual(parsed(url)?.isLoopback, true, url)
        }
        for url in ["http://localhost.example.org:8005", "http://127.0.0.1.example.org", "http://localhost@example.org",
                    "http://127.0.0.1@10.0.0.5:8005", "http://127.0.0.2:8005", "http://10.0.0.5"] {
            XCTAssertEqual(parsed(url)?.isLoopback, false, url)
        }
    }

    func testRefusalsNeverQuoteTheURL() {
        for url in ["", "127.0.0.1/x", "ftp://host/?regOTT=SECRET0TT", "http://", "http://:80/", "http://host:0/",
                    "http://host:65536/", "http://host:+80/", "http://host:/", "http://[::1/", "http://[::1]x/",
                    "http://host/a b?regOTT=SECRET0TT", "http://host/\u{7f}", "http://ho\tst/"] {
            guard case .failure(let error) = URLOrigin.parse(url) else {
                XCTFail("\(url) was accepted")
                continue
            }
            XCTAssertFalse(error.reason.contains("SECRET0TT"), url)
            if url.count > 4 { XCTAssertFalse(error.reason.contains(url), url) }
        }
    }
}
