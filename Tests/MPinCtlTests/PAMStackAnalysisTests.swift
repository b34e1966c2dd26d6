import Foundation
import MPinCtlCommands
import MPinTestSupport
import XCTest

/// doctor's model of a pam.d auth stack (PAMStack, PAMStackRun) and what it concludes
/// (PAMStackAnalysis): stacks that fail open give their warning, the stacks pam-auth-update
/// and careful admins write give none.
final class PAMStackAnalysisTests: XCTestCase {
    /// Debian 12's common-auth with the libpam-mpin profile enabled, as pam-auth-update writes it.
    static let debianCommonAuth = """
        # here are the per-package modules (the "Primary" block)
        auth\t[success=2 authinfo_unavail=ignore ignore=ignore default=die]\tpam_mpin.so nouserok
        auth\t[success=1 default=ignore]\tpam_unix.so nullok
        # here's the fallback if no module succeeds
        auth\trequisite\t\t\tpam_deny.so
        auth\trequired\t\t\tpam_permit.so
        auth\toptional\t\t\tpam_cap.so
        """

    private func analyse(_ files: [String: String], service: String = "sshd", root: Bool = true) throws -> PAMStackAnalysis.Report {
        try XCTUnwrap(PAMStackAnalysis.analyse(service: service, read: { files[$0] }, rootAuthenticates: root),
                      "\(service) loads pam_mpin")
    }

    private func messages(_ report: PAMStackAnalysis.Report) -> String {
        report.findings.map(\.message).joined(separator: "\n")
    }

    func testPamAuthUpdateProfileIsSafeAndFallsBackToThePassword() throws {
        let files = ["common-auth": Self.debianCommonAuth, "sshd": "@include common-auth\naccount required pam_nologin.so\n",
                     "su": "auth sufficient pam_rootok.so\n@include common-auth\n"]
        let sshd = try analyse(files)
        XCTAssertEqual(sshd.findings, [], messages(sshd))
        XCTAssertEqual(sshd.problems, [])
        XCTAssertEqual(sshd.summary, "backend down -> falls through to pam_unix.so; no registration -> falls through to pam_unix.so; "
                       + "root without registration -> refused")
        // pam_rootok lets only a caller who is root already through: no warning for su.
        let su = try analyse(files, service: "su")
        XCTAssertEqual(su.findings, [], messages(su))
        // Without nouserok a user with no registration is refused (PAM_USER_UNKNOWN meets default=die).
        let strict = try analyse(["sshd": Self.debianCommonAuth.replacingOccurrences(of: " nouserok", with: "")])
        XCTAssertEqual(strict.summary, "backend down -> falls through to pam_unix.so; no registration -> refused")
        XCTAssertEqual(strict.findings, [])
    }

    func testAuthinfoUnavailIgnoredWithNothingAfterFailsOpen() throws {
        let open = try analyse(["sshd": """
            auth [success=done authinfo_unavail=ignore default=die] pam_mpin.so
            auth required pam_permit.so
            """])
        XCTAssertTrue(open.summary.hasPrefix("backend down -> logged in with no credential;"), open.summary)
        XCTAssertTrue(open.findings.contains { $0.message.hasPrefix("with the backend down anyone logs in: pam_mpin.so (sshd:1)") }, messages(open))
        XCTAssertTrue(open.findings.allSatisfy { $0.fix.contains("pam_deny.so") })
        // default=ignore does the same.
        let byDefault = try analyse(["sshd": "auth [success=done default=ignore] pam_mpin.so\nauth required pam_permit.so\n"])
        XCTAssertTrue(byDefault.findings.contains { $0.message.hasPrefix("with the backend down anyone logs in") }, messages(byDefault))
        // With a password check after it, the backend down falls back to the password: no warning.
        let fallback = try analyse(["sshd": """
            auth [success=done authinfo_unavail=ignore default=die] pam_mpin.so
            auth required pam_unix.so
            """])
        XCTAssertEqual(fallback.findings, [], messages(fallback))
        XCTAssertTrue(fallback.summary.hasPrefix("backend down -> falls through to pam_unix.so;"), fallback.summary)
    }

    func testSufficientPasswordBeforeMPinFailsOpen() throws {
        let r = try analyse(["sshd": """
            auth sufficient pam_unix.so
            auth required pam_mpin.so
            """])
        XCTAssertTrue(r.findings.contains {
            $0.message == "a password alone logs in without the PIN: pam_unix.so (sshd:1, sufficient) grants the login before pam_mpin.so runs"
                && $0.fix.contains("`required` instead of `sufficient`")
        }, messages(r))
        // Required, in either order: both must pass, and a wrong PIN refuses.
        for stack in ["auth required pam_unix.so\nauth required pam_mpin.so\n", "auth required pam_mpin.so\nauth required pam_unix.so\n"] {
            let safe = try analyse(["sshd": stack])
            XCTAssertEqual(safe.findings, [], "\(stack): \(messages(safe))")
            XCTAssertEqual(safe.summary, "backend down -> refused; no registration -> refused")
        }
        // pam_mpin sufficient with the password after it: the password alone also logs in.
        let alternative = try analyse(["sshd": "auth sufficient pam_mpin.so\nauth required pam_unix.so\n"])
        XCTAssertTrue(alternative.findings.contains { $0.message.contains("after pam_mpin.so fails") }, messages(alternative))
    }

    func testNouserokWithNothingAfterFailsOpenForEveryone() throws {
        let r = try analyse(["sshd": "auth required pam_mpin.so nouserok\nauth required pam_permit.so\n"])
        XCTAssertTrue(r.findings.contains { $0.message == "a user without a registration logs in with no credential (pam_mpin.so answers PAM_IGNORE: nouserok)" },
                      messages(r))
        let strict = try analyse(["sshd": "auth required pam_mpin.so\nauth required pam_permit.so\n"])
        XCTAssertEqual(strict.findings, [], messages(strict))
    }

    /// `nouserok` skips ordinary users only; `nouserok_root` lets root without a registration pass
    /// to the password, which the analysis names wherever root authenticates.
    func testNouserokRootOnAServiceRootUsesIsWarned() throws {
        let line = "auth [success=done authinfo_unavail=ignore ignore=ignore default=die] pam_mpin.so nouserok nouserok_root\nauth required pam_unix.so\n"
        let r = try analyse(["login": line], service: "login")
        XCTAssertTrue(r.findings.contains {
            $0.message == "root without a registration logs in with pam_unix.so (login:2, required) alone (nouserok_root at login:1)"
                && $0.fix.contains("drop nouserok_root")
        }, messages(r))
        let notForRoot = try analyse(["login": line], service: "login", root: false)
        XCTAssertEqual(notForRoot.findings, [], messages(notForRoot))
        // nouserok alone (the pam-auth-update profile) does not cover root; nouserok_root alone does nothing.
        let plain = try analyse(["login": line.replacingOccurrences(of: " nouserok_root", with: "")], service: "login")
        XCTAssertEqual(plain.findings, [], messages(plain))
        XCTAssertEqual(plain.summary, "backend down -> falls through to pam_unix.so; no registration -> falls through to pam_unix.so; root without registration -> refused")
        let rootOnly = try analyse(["login": line.replacingOccurrences(of: "nouserok nouserok_root", with: "nouserok_root")], service: "login")
        XCTAssertEqual(rootOnly.findings, [], messages(rootOnly))
        XCTAssertEqual(rootOnly.summary, "backend down -> falls through to pam_unix.so; no registration -> refused", "root as everyone else")
    }

    /// Enabling the module must lock nobody out: root (or the administrator) without a
    /// registration, refused with the password known, is a lockout; the packaged profile
    /// (nouserok nouserok_root require_group=mpin) leaves root to the password and is clean.
    func testRootWithoutRegistrationRefusedIsALockout() throws {
        let strict = "auth [success=done authinfo_unavail=ignore ignore=ignore default=die] pam_mpin.so nouserok\nauth required pam_unix.so\n"
        let rootAnswer = PAMStackAnalysis.Unregistered(who: "root", answer: { line in
            line.has("nouserok") && line.has("nouserok_root") ? .ignore : .userUnknown
        }, authenticates: { $0 != "sudo" })
        func report(_ text: String, service: String = "login") throws -> PAMStackAnalysis.Report {
            try XCTUnwrap(PAMStackAnalysis.analyse(service: service, read: { $0 == service ? text : nil }, mustGetIn: [rootAnswer]))
        }
        let locked = try report(strict)
        XCTAssertEqual(locked.lockouts.count, 1)
        XCTAssertTrue(locked.lockouts[0].message.hasPrefix("root has no registration and is refused"), locked.lockouts[0].message)
        XCTAssertTrue(locked.lockouts[0].fix.contains("nouserok_root"))
        // The same stack for sudo, which root never authenticates through: nothing to say.
        XCTAssertEqual(try report(strict, service: "sudo").lockouts, [])
        let profile = strict.replacingOccurrences(of: "nouserok", with: "nouserok nouserok_root require_group=mpin")
        let packaged = try report(profile)
        XCTAssertEqual(packaged.lockouts, [])
        XCTAssertEqual(packaged.findings, [], packaged.findings.map(\.message).joined(separator: "\n"))
    }

    /// Arguments another part of the module adds (require_group=, exempt_group=) are read where
    /// they matter and otherwise pass untouched; an exempt member must still meet a credential.
    func testExemptGroupWithNothingAfterFailsOpen() throws {
        let open = try analyse(["sshd": "auth [success=done ignore=ignore default=die] pam_mpin.so exempt_group=ops require_group=staff\nauth required pam_permit.so\n"])
        XCTAssertTrue(open.findings.contains { $0.message == "a member of exempt_group logs in with no credential" }, messages(open))
        let safe = try analyse(["sshd": "auth [success=done ignore=ignore default=die] pam_mpin.so exempt_group=ops\nauth required pam_unix.so\n"])
        XCTAssertEqual(safe.findings, [], messages(safe))
    }

    /// exempt_group set in the configuration the line reads (not on the line) skips members all
    /// the same: the same finding.
    func testExemptGroupFromTheConfigurationIsSeen() throws {
        let stack = ["sshd": "auth [success=done ignore=ignore default=die] pam_mpin.so config=/etc/mpin/ops.conf\nauth required pam_permit.so\n"]
        let fromConfig = try XCTUnwrap(PAMStackAnalysis.analyse(service: "sshd", read: { stack[$0] }, exemptsByConfig: { line in
            line.arguments.contains("config=/etc/mpin/ops.conf")
        }))
        XCTAssertTrue(fromConfig.findings.contains { $0.message == "a member of exempt_group logs in with no credential" },
                      messages(fromConfig))
        let without = try analyse(stack)
        XCTAssertFalse(without.findings.contains { $0.message.contains("exempt_group") }, messages(without))
    }

    func testConditionThatSkipsMPinIsNamed() throws {
        let r = try analyse(["sshd": """
            auth sufficient pam_succeed_if.so user ingroup nomfa
            auth required pam_mpin.so
            """])
        XCTAssertEqual(r.findings.map(\.message), ["anyone logs in without pam_mpin.so running when pam_succeed_if.so (sshd:1) answers success"])
        XCTAssertEqual(r.summary, "backend down -> refused; no registration -> refused", "for everyone else")
    }

    func testIncludesAndSubstacks() throws {
        // `auth include` takes only the auth lines; `@include` takes every line; both inline.
        let stack = PAMStack.auth(service: "svc") { name in
            ["svc": "@include a\nauth include b\naccount required pam_deny.so\n",
             "a": "auth required pam_env.so\nsession required pam_limits.so\n",
             "b": "account required pam_nologin.so\nauth required pam_unix.so \\\n  nullok\n"][name]
        }
        XCTAssertEqual(stack.modules.map(\.place), ["a:1", "b:2"])
        XCTAssertEqual(stack.modules.last?.arguments, ["nullok"], "a line ending in \\ continues")

        // A jump counts a substack as one module; `die` inside a substack ends only the substack.
        let files = ["svc": "auth [success=1 default=ignore] pam_unix.so\nauth substack inner\nauth required pam_permit.so\n",
                     "inner": "auth [default=die] pam_mpin.so\nauth required pam_permit.so\n"]
        let nested = PAMStack.auth(service: "svc") { files[$0] }
        XCTAssertEqual(nested.elements.map(\.level), [0, 0, 1, 1, 0])
        let jumped = PAMStackRun.all(nested) { $0.name == "pam_unix" ? [.success] : [.success] }
        XCTAssertEqual(jumped.map { $0.steps.map(\.line.place) }, [["svc:1", "svc:3"]])
        XCTAssertEqual(jumped.map(\.granted), [true])
        let died = PAMStackRun.all(nested) { $0.name == "pam_permit" ? [.success] : [.authErr] }
        XCTAssertEqual(died.map { $0.steps.map(\.line.place) }, [["svc:1", "inner:1", "svc:3"]], "the parent stack goes on after the substack")
        XCTAssertEqual(died.map(\.granted), [false], "but the failure stays")

        let missing = PAMStack.auth(service: "svc") { $0 == "svc" ? "@include gone\nauth required pam_mpin.so\n" : nil }
        XCTAssertEqual(missing.problems, ["svc:1: includes gone, which does not exist"])
        XCTAssertEqual(PAMStack.auth(service: "loop") { _ in "@include loop\n" }.problems.count, 1, "an include loop stops")
    }

    func testControlValues() throws {
        let bracket = try XCTUnwrap(PAMControl("[success=2 authinfo_unavail=ignore default=die]"))
        XCTAssertEqual(bracket.action(for: .success), .jump(2))
        XCTAssertEqual(bracket.action(for: .authinfoUnavail), .ignore)
        XCTAssertEqual(bracket.action(for: .userUnknown), .die)
        // `default` fills what is unset when it is read; what stays unset is `bad`.
        let late = try XCTUnwrap(PAMControl("[default=ignore success=ok]"))
        XCTAssertEqual(late.action(for: .success), .ok)
        XCTAssertEqual(late.action(for: .authErr), .ignore)
        XCTAssertEqual(PAMControl("[success=ok]")?.action(for: .authErr), .bad)
        XCTAssertEqual(PAMControl("[success=nonsense default=ignore]")?.action(for: .success), .bad, "libpam reads a bad list as bad everywhere")
        XCTAssertEqual(PAMControl("Sufficient")?.action(for: .success), .done)
        XCTAssertEqual(PAMControl("requisite")?.action(for: .authErr), .die)
        XCTAssertEqual(PAMControl("optional")?.action(for: .authErr), .ignore)
        XCTAssertNil(PAMControl("mandatory"))
        let broken = PAMStack.auth(service: "svc") { _ in "auth mandatory pam_mpin.so\n" }
        XCTAssertEqual(broken.problems, ["svc:1: cannot be read (control `mandatory`)"])
    }

    /// A real directory: services are reported, building blocks (common-*) are not, and a file
    /// that does not load pam_mpin gives no report.
    func testDirectory() throws {
        let dir = try PrivateDirectory("pam-stack")
        defer { dir.remove() }
        _ = try dir.write("common-auth", Self.debianCommonAuth, mode: 0o644)
        _ = try dir.write("sshd", "@include common-auth\n", mode: 0o644)
        _ = try dir.write("sudo", "auth sufficient pam_unix.so\n@include common-auth\n", mode: 0o644)
        _ = try dir.write("cron", "auth required pam_unix.so\n", mode: 0o644)
        let reports = PAMStackAnalysis.analyse(directory: dir.path, rootAuthenticates: { _ in true }) { path in
            try? String(contentsOfFile: path, encoding: .utf8)
        }
        XCTAssertEqual(reports.map(\.service), ["sshd", "sudo"])
        XCTAssertEqual(reports.map(\.findings.count), [0, 1])
    }

    func testSSHDSettings() {
        let good = SSHDCheck(output: "usepam yes\nkbdinteractiveauthentication yes\npubkeyauthentication yes\n"
                             + "authenticationmethods publickey,keyboard-interactive\npermitrootlogin prohibit-password\n")
        XCTAssertEqual(good.results.map(\.ok), [true, true, true])
        XCTAssertFalse(good.rootUsesPAM)
        let bad = SSHDCheck(output: "usepam no\nkbdinteractiveauthentication no\npubkeyauthentication yes\nauthenticationmethods any\npermitrootlogin yes\n")
        XCTAssertEqual(bad.results.map(\.ok), [false, false, false])
        XCTAssertEqual(bad.results.map(\.detail), ["UsePAM no: sshd never runs pam_mpin",
                                                   "KbdInteractiveAuthentication no: pam_mpin's PIN prompt cannot reach the user",
                                                   "AuthenticationMethods any: publickey alone logs in without pam_mpin"])
        XCTAssertEqual(bad.results.map(\.fix).first, "set `UsePAM yes` in sshd_config")
        XCTAssertTrue(bad.rootUsesPAM)
        let keyOnlyList = SSHDCheck(output: "usepam yes\nchallengeresponseauthentication yes\nauthenticationmethods publickey,keyboard-interactive publickey\n")
        XCTAssertEqual(keyOnlyList.results.map(\.ok), [true, true, false])
        XCTAssertEqual(keyOnlyList.results[1].detail, "ChallengeResponseAuthentication yes")
        XCTAssertEqual(keyOnlyList.results[2].detail, "AuthenticationMethods publickey,keyboard-interactive publickey: publickey logs in without pam_mpin")
        // `any` with no method that skips PAM: keyboard-interactive (or password through PAM) is the only way in.
        XCTAssertTrue(SSHDCheck(output: "usepam yes\nkbdinteractiveauthentication yes\npubkeyauthentication no\nauthenticationmethods any\n").results[2].ok)
    }
}
