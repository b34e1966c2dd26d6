import Foundation
import MPinTestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The built `mpinctl doctor` against crafted pam.d directories and sshd configurations: a stack
/// that fails open is named with its fix and fails the run, a safe one is described without a
/// warning, and sshd's settings come from the real `sshd -T` (as root, where sshd is installed).
final class DoctorStackTests: XCTestCase {
    private func doctor(_ dir: PrivateDirectory, pamDir: String, sshdConfig: String?) throws -> ProcessResult {
        let config = dir.appending("mpin.conf")
        if !FileManager.default.fileExists(atPath: config) { _ = try dir.write("mpin.conf", "") }
        return try runProcess(try builtExecutable("mpinctl").path,
                              ["--config", config, "doctor", "--pam-dir", pamDir] + (sshdConfig.map { ["--sshd-config", $0] } ?? []))
    }

    /// sshd and the root needed to read its host keys, or nil (the sshd lines are then not asserted).
    private func sshdConfig(_ dir: PrivateDirectory, _ text: String) throws -> String? {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/sbin/sshd") else { return nil }
        // sshd -T needs its privilege separation directory, which sshd's service makes when it
        // starts: on a machine where sshd never ran, the test makes it as the service would.
        if !FileManager.default.fileExists(atPath: "/run/sshd") {
            try FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o755])
        }
        let key = dir.appending("host_ed25519")
        let made = try runProcess("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", key])
        XCTAssertEqual(made.status, 0, made.stderr)
        return try dir.write("sshd_config", "HostKey \(key)\n" + text, mode: 0o644)
    }

    func testFailOpenStackIsWarnedAndFailsTheRun() throws {
        let dir = try PrivateDirectory("doctor-stack")
        defer { dir.remove() }
        let pamDir = dir.appending("pam.d")
        XCTAssertEqual(mkdir(pamDir, 0o755), 0)
        // The backend down is ignored and only pam_permit follows: anyone gets in.
        _ = try dir.write("pam.d/sshd", """
            auth [success=done authinfo_unavail=ignore default=die] pam_mpin.so
            auth required pam_permit.so
            """, mode: 0o644)
        _ = try dir.write("pam.d/sudo", "auth sufficient pam_unix.so\nauth required pam_mpin.so\n", mode: 0o644)
        let sshd = try sshdConfig(dir, "UsePAM no\nKbdInteractiveAuthentication yes\nAuthenticationMethods publickey,keyboard-interactive\n")
        let r = try doctor(dir, pamDir: pamDir, sshdConfig: sshd)
        XCTAssertEqual(r.status, 1, r.stdout)
        XCTAssertTrue(r.lines.contains("FAIL stack: sshd: backend down -> logged in with no credential; no registration -> refused -- fix: see the lines below"), r.stdout)
        XCTAssertTrue(r.lines.contains {
            $0.hasPrefix("FAIL fail-open: sshd: with the backend down anyone logs in: pam_mpin.so (sshd:1) answers PAM_AUTHINFO_UNAVAIL")
                && $0.contains(" -- fix: ") && $0.contains("pam_deny.so")
        }, r.stdout)
        XCTAssertTrue(r.lines.contains("FAIL fail-open: sudo: a password alone logs in without the PIN: pam_unix.so (sudo:1, sufficient) grants the login "
                                       + "before pam_mpin.so runs -- fix: put pam_mpin.so before it, or make that line `required` instead of `sufficient`"), r.stdout)
        if sshd != nil {
            XCTAssertTrue(r.lines.contains("FAIL sshd: UsePAM no: sshd never runs pam_mpin -- fix: set `UsePAM yes` in sshd_config"), r.stdout)
            XCTAssertTrue(r.lines.contains("ok   sshd: KbdInteractiveAuthentication yes"), r.stdout)
            XCTAssertTrue(r.lines.contains("ok   sshd: AuthenticationMethods publickey,keyboard-interactive"), r.stdout)
        } else {
            print("DoctorStackTests: sshd -T not run (needs root and /usr/sbin/sshd)")
        }
    }

    func testSafeStackIsDescribedWithoutWarning() throws {
        let dir = try PrivateDirectory("doctor-stack")
        defer { dir.remove() }
        let pamDir = dir.appending("pam.d")
        XCTAssertEqual(mkdir(pamDir, 0o755), 0)
        _ = try dir.write("pam.d/common-auth", PAMStackAnalysisTests.debianCommonAuth, mode: 0o644)
        _ = try dir.write("pam.d/sshd", "@include common-auth\naccount required pam_nologin.so\n", mode: 0o644)
        let sshd = try sshdConfig(dir, "UsePAM yes\nKbdInteractiveAuthentication yes\nPubkeyAuthentication yes\nAuthenticationMethods any\nPermitRootLogin no\n")
        let r = try doctor(dir, pamDir: pamDir, sshdConfig: sshd)
        XCTAssertFalse(r.lines.contains { $0.hasPrefix("FAIL fail-open") || $0.hasPrefix("FAIL stack") }, r.stdout)
        XCTAssertTrue(r.lines.contains { $0.hasPrefix("ok   stack: sshd: backend down -> falls through to pam_unix.so; no registration -> falls through to pam_unix.so") },
                      r.stdout)
        XCTAssertFalse(r.stdout.contains("common-auth: "), "a building block is not a service of its own")
        if sshd != nil {
            // PermitRootLogin no: root never meets this stack, so nothing is said about root.
            XCTAssertTrue(r.lines.contains("ok   stack: sshd: backend down -> falls through to pam_unix.so; no registration -> falls through to pam_unix.so"), r.stdout)
            XCTAssertTrue(r.lines.contains("FAIL sshd: AuthenticationMethods any: publickey alone logs in without pam_mpin -- fix: set "
                                           + "`AuthenticationMethods publickey,keyboard-interactive` (a key and the PIN) or `AuthenticationMethods keyboard-interactive` in sshd_config"), r.stdout)
        }
    }
}
