import MPinCLI

/// What a service's auth stack does when pam_mpin does not say yes, and where that fails open.
///
/// The stack is run (PAMStackRun) under a few scenarios, each once with every other credential
/// module failing (a stranger who knows nothing) and once with them succeeding (someone who
/// knows the password): the backend down, a user without a registration, root without one, a
/// member of `exempt_group`, a wrong PIN. A scenario in which the stranger gets in fails open;
/// the password alone getting past a wrong PIN, or past root's missing registration, defeats
/// the PIN. The other modules are modelled by name (ModuleKind); a module this does not know is
/// taken to check a credential, which never invents a warning, only may miss one.
public enum PAMStackAnalysis {
    /// How a module behaves for a login in this model.
    enum ModuleKind {
        case mpin
        /// Checks something the user must know or hold (pam_unix, pam_sss, pam_u2f, ...).
        case credential
        /// Succeeds without asking anything (pam_permit, pam_env, ...).
        case pass
        /// Fails (pam_deny; pam_rootok for anyone but root calling).
        case fail
        /// Answers PAM_IGNORE (pam_warn, pam_echo).
        case ignore
        /// Succeeds or fails on a condition about the user or the session (pam_succeed_if, ...).
        case condition
    }

    static let passing: Set<String> = ["pam_permit", "pam_env", "pam_faildelay", "pam_cap", "pam_group", "pam_mkhomedir",
                                       "pam_keyinit", "pam_loginuid", "pam_limits", "pam_motd", "pam_mail", "pam_lastlog",
                                       "pam_umask", "pam_xauth", "pam_selinux", "pam_systemd", "pam_gnome_keyring",
                                       "pam_kwallet", "pam_kwallet5", "pam_namespace", "pam_tty_audit", "pam_mount"]
    static let conditions: Set<String> = ["pam_succeed_if", "pam_listfile", "pam_localuser", "pam_access", "pam_time",
                                          "pam_wheel", "pam_securetty", "pam_shells", "pam_nologin", "pam_usertype",
                                          "pam_sepermit", "pam_exec", "pam_faillock"]

    static func kind(of line: PAMModuleLine) -> ModuleKind {
        let name = line.name
        if line.isMPin { return .mpin }
        if name == "pam_deny" || name == "pam_rootok" { return .fail }
        if name == "pam_warn" || name == "pam_echo" { return .ignore }
        if name == "pam_faillock" { return line.has("authfail") ? .fail : line.has("authsucc") ? .pass : .condition }
        if passing.contains(name) { return .pass }
        if conditions.contains(name) { return .condition }
        return .credential
    }

    /// A fail-open combination, with what to change.
    public struct Finding: Equatable, Sendable {
        public let message: String
        public let fix: String
    }

    public struct Report: Sendable {
        public let service: String
        /// One line: what a login does when the backend is down and when the user has no registration.
        public let summary: String
        public let findings: [Finding]
        /// Lines libpam cannot use (missing includes, unknown controls).
        public let problems: [String]
        /// Accounts this stack refuses outright although they know their password: root, or the
        /// administrator running doctor, without a registration (a lockout waiting to happen).
        public var lockouts: [Finding] = []
    }

    /// Someone who must still get in through a stack: root, or the administrator running doctor,
    /// with no registration; `answer` is what pam_mpin answers them on a line (its policy:
    /// nouserok, nouserok_root, require_group).
    public struct Unregistered {
        public let who: String
        public let answer: (PAMModuleLine) -> PAMCode
        /// Whether this account logs in through the service at all (root and sudo: no).
        public let authenticates: (String) -> Bool
        public init(who: String, answer: @escaping (PAMModuleLine) -> PAMCode, authenticates: @escaping (String) -> Bool) {
            self.who = who; self.answer = answer; self.authenticates = authenticates
        }
    }

    /// The report for `service`, or nil when its auth stack does not load pam_mpin.
    /// `rootAuthenticates`: whether root logs in through this service with its auth stack (not
    /// sshd with PermitRootLogin other than yes, not sudo).
    /// `exemptsByConfig`: whether the configuration a pam_mpin line reads (its `config=`, else
    /// /etc/mpin/mpin.conf) sets `exempt_group`, which an exempt member skips as if the line said so.
    public static func analyse(service: String, read: (String) -> String?, rootAuthenticates: Bool = true,
                               exemptsByConfig: (PAMModuleLine) -> Bool = { _ in false },
                               mustGetIn: [Unregistered] = []) -> Report? {
        let stack = PAMStack.auth(service: service, read: read)
        func exempts(_ line: PAMModuleLine) -> Bool { line.hasArgument(prefix: "exempt_group=") || exemptsByConfig(line) }
        let mpinLines = stack.modules.filter(\.isMPin)
        guard !mpinLines.isEmpty else { return nil }
        var findings: [Finding] = []
        let mpinPlaces = mpinLines.map(\.place).joined(separator: ", ")
        let endWithDeny = "let nothing after pam_mpin grant the login on its own: end the stack with `auth requisite pam_deny.so`, or give the pam_mpin line `default=die`"

        func runs(_ mpin: (PAMModuleLine) -> PAMCode, credentialsKnown: Bool) -> [PAMStackRun] {
            PAMStackRun.all(stack) { line in
                switch kind(of: line) {
                case .mpin: [mpin(line)]
                case .credential: [credentialsKnown ? .success : .authErr]
                case .pass: [.success]
                case .fail: [.authErr]
                case .ignore: [.ignore]
                case .condition: [.success, .authErr]
                }
            }
        }
        /// What the login comes to, for the summary, and the strangers' way in, if any.
        func outcome(_ mpin: (PAMModuleLine) -> PAMCode) -> (text: String, openRun: PAMStackRun?, passwordRun: PAMStackRun?) {
            // A stranger's runs that never reach pam_mpin are the bypass finding's (below), not this scenario's.
            let reachesMPin: (PAMStackRun) -> Bool = { $0.granted && $0.steps.contains { $0.line.isMPin } }
            let open = runs(mpin, credentialsKnown: false).first(where: reachesMPin)
            if open != nil { return ("logged in with no credential", open, nil) }
            let withPassword = runs(mpin, credentialsKnown: true).filter { run in
                run.granted && run.steps.contains { $0.line.isMPin || (kind(of: $0.line) == .credential && $0.code == .success) }
            }
            guard !withPassword.isEmpty else { return ("refused", nil, nil) }
            var names: [String] = []
            var afterMPin = true
            for run in withPassword {
                let firstMPin = run.steps.firstIndex { $0.line.isMPin } ?? run.steps.count
                for (index, step) in run.steps.enumerated() where kind(of: step.line) == .credential && step.code == .success {
                    if index < firstMPin { afterMPin = false }
                    if !names.contains(step.line.name) { names.append(step.line.name) }
                }
            }
            let modules = names.map { $0 + ".so" }.joined(separator: " or ")
            return ((afterMPin ? "falls through to " : "left to ") + modules, nil, withPassword.first)
        }
        /// Which conditions let a run through (the ones that changed its course), for the message.
        func conditionsText(_ run: PAMStackRun) -> String {
            let deciding = run.steps.filter { kind(of: $0.line) == .condition && $0.action != .ok && $0.action != .ignore && $0.action != .bad }
            guard !deciding.isEmpty else { return "" }
            return " when " + deciding.map { "\($0.line.name).so (\($0.line.place)) answers \($0.code == .success ? "success" : "failure")" }
                .joined(separator: " and ")
        }
        func grantors(_ run: PAMStackRun) -> String {
            run.steps.filter { kind(of: $0.line) == .credential && $0.code == .success }
                .map { "\($0.line.name).so (\($0.line.place), \($0.line.control.written))" }.joined(separator: ", ")
        }

        // A way through the stack that never runs pam_mpin and asks for nothing.
        if let run = runs({ _ in .authErr }, credentialsKnown: false).first(where: { $0.granted && !$0.steps.contains { $0.line.isMPin } }) {
            findings.append(Finding(message: "anyone logs in without pam_mpin.so running\(conditionsText(run))",
                                    fix: "let the lines before pam_mpin only fail the login or pass it on (`required`, `requisite`), never grant it (`sufficient`, `success=done`)"))
        }
        // The backend cannot be reached (or TLS fails): PAM_AUTHINFO_UNAVAIL.
        let down = outcome { _ in .authinfoUnavail }
        if let run = down.openRun {
            findings.append(Finding(message: "with the backend down anyone logs in\(conditionsText(run)): pam_mpin.so (\(mpinPlaces)) answers PAM_AUTHINFO_UNAVAIL, the line lets it pass (`\(mpinLines[0].control.written)`), and nothing after it asks for a credential",
                                    fix: endWithDeny))
        }
        // No registration: PAM_IGNORE with nouserok, else PAM_USER_UNKNOWN.
        let unregistered = outcome { $0.has("nouserok") ? .ignore : .userUnknown }
        if let run = unregistered.openRun {
            findings.append(Finding(message: "a user without a registration logs in with no credential\(conditionsText(run)) (pam_mpin.so answers \(mpinLines.contains { $0.has("nouserok") } ? "PAM_IGNORE: nouserok" : "PAM_USER_UNKNOWN"))",
                                    fix: endWithDeny))
        }
        let wrongPIN = outcome { _ in .authErr }
        // Root without a registration: nouserok skips root only together with nouserok_root.
        var summary = "backend down -> \(down.text); no registration -> \(unregistered.text)"
        if rootAuthenticates {
            let root = outcome { $0.has("nouserok") && $0.has("nouserok_root") ? .ignore : .userUnknown }
            if root.text != unregistered.text { summary += "; root without registration -> \(root.text)" }
            // When a password alone gets past a wrong PIN, that finding (below) covers root too.
            let passwordAloneForAll = wrongPIN.openRun != nil || wrongPIN.passwordRun != nil
            if let run = root.openRun, unregistered.openRun == nil, !passwordAloneForAll {
                findings.append(Finding(message: "root without a registration logs in with no credential\(conditionsText(run))", fix: endWithDeny))
            } else if let run = root.passwordRun, !passwordAloneForAll,
                      // With require_group the line says who must use M-Pin: root, outside
                      // those groups, is left to the password by that policy (the packaged
                      // profile), as every other non-member is.
                      !mpinLines.allSatisfy({ $0.hasArgument(prefix: "require_group=") }) {
                let skip = mpinLines.filter { $0.has("nouserok") && $0.has("nouserok_root") }.map(\.place)
                findings.append(Finding(message: "root without a registration logs in with \(grantors(run)) alone\(conditionsText(run))"
                                        + (skip.isEmpty ? "" : " (nouserok_root at \(skip.joined(separator: ", ")))"),
                                        fix: skip.isEmpty ? "end the stack when pam_mpin answers PAM_USER_UNKNOWN (`user_unknown=die` or `default=die`), and register root"
                                                          : "register root (mpinctl register root ...) and drop nouserok_root"))
            }
        }
        // Members of exempt_group are skipped with PAM_IGNORE: something after must still ask.
        if mpinLines.contains(where: exempts) {
            let exempt = outcome { exempts($0) ? .ignore : .authErr }
            if let run = exempt.openRun {
                findings.append(Finding(message: "a member of exempt_group logs in with no credential\(conditionsText(run))", fix: endWithDeny))
            }
        }
        // A wrong PIN (or none): with the password known, nothing else should let the login through.
        if let run = wrongPIN.openRun {
            findings.append(Finding(message: "anyone logs in without the PIN\(conditionsText(run)): pam_mpin.so's failure does not end the stack", fix: endWithDeny))
        } else if let run = wrongPIN.passwordRun {
            let before = run.steps.prefix { !$0.line.isMPin }.contains { kind(of: $0.line) == .credential && $0.code == .success }
            findings.append(Finding(message: "a password alone logs in without the PIN\(conditionsText(run)): \(grantors(run)) grants the login"
                                    + (before ? " before pam_mpin.so runs" : " after pam_mpin.so fails"),
                                    fix: before ? "put pam_mpin.so before it, or make that line `required` instead of `sufficient`"
                                                : "give the pam_mpin line `default=die` (or `requisite`), so that a wrong PIN ends the stack"))
        }
        var report = Report(service: service, summary: summary, findings: findings, problems: stack.problems)
        // A lockout: someone who knows the password, but has no registration, refused.
        for account in mustGetIn where account.authenticates(service) {
            guard outcome(account.answer).text == "refused" else { continue }
            let lines = mpinLines.map { "\($0.place) answers \(account.answer($0).rawValue)" }.joined(separator: ", ")
            report.lockouts.append(Finding(
                message: "\(account.who) has no registration and is refused, password or not (pam_mpin.so at \(lines))",
                fix: "leave unregistered users to the next module: `nouserok` (and `nouserok_root` for root) with "
                    + "`require_group=GROUP` for those who must use M-Pin (the packaged profile does this), or register \(account.who) first"))
        }
        return report
    }

    /// pam.d files that only other files include, named as Debian, Fedora and Arch name them:
    /// not services of their own, so not reported by themselves.
    public static func isBuildingBlock(_ name: String) -> Bool {
        name.hasPrefix("common-") || ["system-auth", "password-auth", "smartcard-auth", "fingerprint-auth", "postlogin",
                                      "system-login", "system-local-login", "system-remote-login", "system-services"].contains(name)
    }

    /// The reports for every service in `directory` whose auth stack loads pam_mpin.
    public static func analyse(directory: String, rootAuthenticates: (String) -> Bool,
                               readFile: (String) -> String?,
                               exemptsByConfig: (PAMModuleLine) -> Bool = { _ in false },
                               mustGetIn: [Unregistered] = []) -> [Report] {
        let names = (System.directoryEntries(directory) ?? []).filter { !$0.hasPrefix(".") && !$0.hasSuffix("~") }.sorted()
        return names.filter { !isBuildingBlock($0) }.compactMap { service in
            analyse(service: service, read: { name in readFile(name.hasPrefix("/") ? name : directory + "/" + name) },
                    rootAuthenticates: rootAuthenticates(service), exemptsByConfig: exemptsByConfig, mustGetIn: mustGetIn)
        }
    }
}
