import MPinTestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The built `mpinctl` is also `mpin` when run by that name: the libpam-mpin package installs
/// /usr/bin/mpin as a symbolic link to /usr/sbin/mpinctl (one static Swift runtime
/// instead of two; docs/PERFORMANCE.md §2.6). Any other name is mpinctl.
final class MultiCallTests: XCTestCase {
    /// A symbolic link named `name` to the built mpinctl, in a fresh directory.
    private func link(_ name: String) throws -> String {
        let directory = try PrivateDirectory("mpin-multicall")
        addTeardownBlock { directory.remove() }
        let path = directory.appending(name)
        guard symlink(try builtExecutable("mpinctl").path, path) == 0 else { throw SetupFailure("symlink: errno \(errno)") }
        return path
    }

    func testRunAsMpinItIsMpin() throws {
        let mpin = try link("mpin")
        let help = try runProcess(mpin, ["--help"])
        XCTAssertEqual(help.status, 0, help.stderr)
        XCTAssertTrue(help.stdout.contains("USAGE: mpin <subcommand>"), help.stdout)
        XCTAssertTrue(help.stdout.contains("approve"), help.stdout)
        XCTAssertFalse(help.stdout.contains("doctor"), help.stdout)

        // mpin's own checks and messages, none of mpinctl's (which would say NOT_ROOT or read mpin.conf).
        let register = try runProcess(mpin, ["register", "--backend", "ftp://example.org", "--identity", "a@example.org"])
        XCTAssertEqual(register.status, 1)
        XCTAssertTrue(register.stderr.hasPrefix("mpin: CONFIG_ERROR: --backend must be an http:// or https:// URL"), register.stderr)

        // An empty store of the user's own: nothing registered, nothing printed, status 0.
        let store = try PrivateDirectory("mpin-multicall-store")
        addTeardownBlock { store.remove() }
        let list = try runProcess(mpin, ["list", "--store", store.appending("none")])
        XCTAssertEqual(list.status, 0, list.stderr)
        XCTAssertEqual(list.stdout, "")
    }

    func testRunByAnyOtherNameItIsMpinctl() throws {
        for name in ["mpinctl", "mpin-admin", "xmpin"] {
            let ctl = try link(name)
            let version = try runProcess(ctl, ["version"])
            XCTAssertEqual(version.status, 0, "\(name): \(version.stderr)")
            XCTAssertTrue(version.stdout.hasPrefix("mpinctl "), "\(name): \(version.stdout)")
            let help = try runProcess(ctl, ["--help"])
            XCTAssertTrue(help.stdout.contains("USAGE: mpinctl <subcommand>"), "\(name): \(help.stdout)")
        }
    }
}
