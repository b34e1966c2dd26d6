import Foundation
import MPinTestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// What `mpinctl register` accepts as a new PIN (docs/SECURITY.md §6.9): Milagro reduces any PIN
/// text to one of 10,000 values, so only digits, exactly `pin_length` of them, are registered,
/// and a refusal says why; against the built `mpin-server` on 127.0.0.1.
final class RegistrationPINTests: XCTestCase {
    private var scratch: PrivateDirectory?
    private var server: LocalServer?

    override func setUpWithError() throws {
        guard getuid() == 0 else {
            throw XCTSkip("mpinctl manages a root-owned store and refuses to run as another user: run the tests as root")
        }
        let dir = try PrivateDirectory("mpinctl-pin-test")
        scratch = dir
        server = try LocalServer(in: dir)
        guard mkdir(dir.appending("store"), 0o700) == 0 else { throw SetupFailure("mkdir store: errno \(errno)") }
    }

    override func tearDown() {
        server?.stop()
        server = nil
        scratch?.remove()
        scratch = nil
        super.tearDown()
    }

    /// The configuration `name` for the running server, with the extra lines given; its path.
    private func config(_ name: String, _ extra: String = "") throws -> String {
        let dir = try XCTUnwrap(scratch)
        let url = try XCTUnwrap(server).url, key = try XCTUnwrap(server).verdictKey
        return try dir.write(name, "backend = \(url)\nstore = \(dir.appending("store"))\ntimeout = 3\nverdict_key = \(key)\n\(extra)")
    }

    private func register(_ config: String, _ user: String, pin: String) throws -> ProcessResult {
        try runProcess(try builtExecutable("mpinctl").path,
                       ["--config", config, "register", user, "--identity", "\(user)@example.org", "--pin-stdin"], input: pin + "\n")
    }

    private func listed(_ config: String) throws -> String {
        try runProcess(try builtExecutable("mpinctl").path, ["--config", config, "list"]).stdout
    }

    func testOnlyDigitsOfTheConfiguredLengthAreRegistered() throws {
        let conf = try config("mpin.conf")
        for pin in ["correct horse battery staple", "12a4", "123", "12345", "１２３４"] {
            let r = try register(conf, "alice", pin: pin)
            XCTAssertEqual(r.status, 1, "\(pin): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains("PIN_FORMAT: the PIN must be exactly 4 digits"), "\(pin): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains("10000 values"), "says why: \(r.stderr)")
            // The server's URL and the scratch path are in the output and may hold the digits
            // of a short PIN by chance (port 41234 holds "123"): leave them out before looking.
            let told = r.stderr.replacingOccurrences(of: try XCTUnwrap(server).url, with: "")
                .replacingOccurrences(of: try XCTUnwrap(scratch).path, with: "")
            XCTAssertFalse(told.contains(pin), "\(pin): the PIN is not repeated in the error: \(told)")
            XCTAssertFalse(try listed(conf).contains("REGISTERED"), "\(pin): nothing registered")
        }
        let ok = try register(conf, "alice", pin: "0984")
        XCTAssertEqual(ok.status, 0, ok.stderr)
        XCTAssertTrue(try listed(conf).contains("alice\talice@example.org"), "registered after the refusals")
    }

    func testLongerPINsWithANote() throws {
        let conf = try config("six.conf", "pin_length = 6\n")
        let short = try register(conf, "carol", pin: "1234")
        XCTAssertEqual(short.status, 1, short.stderr)
        XCTAssertTrue(short.stderr.contains("exactly 6 digits"), short.stderr)
        let six = try register(conf, "carol", pin: "123456")
        XCTAssertEqual(six.status, 0, six.stderr)
        XCTAssertTrue(six.stderr.contains("no harder to guess than a 4-digit one"), six.stderr)

        let bad = try runProcess(try builtExecutable("mpinctl").path, ["--config", try config("nine.conf", "pin_length = 9\n"), "list"])
        XCTAssertEqual(bad.status, 3, bad.stderr)
        XCTAssertTrue(bad.stderr.contains("pin_length must be a number of digits from 4 to 8"), bad.stderr)
    }
}
