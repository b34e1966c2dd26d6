#if canImport(Glibc)
import Glibc
#endif
import MPinCLI
import MPinClient
import MPinLinux
import MPinLogin

/// `mpinctl doctor`: one line per check, each failure with what to do about it.
struct Doctor: CLICommand {
    static let declaration = CommandDeclaration(
        "doctor", abstract: "Check the configuration, store, module and backend.",
        options: GlobalOptions.declarations + [
            .option("pam-dir", default: "/etc/pam.d", help: "The PAM configuration directory whose references to pam_mpin are checked."),
            .option("sshd-config", help: "The sshd configuration `sshd -T` reads, instead of its own default (/etc/ssh/sshd_config)."),
        ])
    let global: GlobalOptions
    let pamDir: String, sshdConfig: String?

    init(_ line: ParsedCommandLine) {
        global = GlobalOptions(line)
        pamDir = line.requiredValue("pam-dir")
        sshdConfig = line.value("sshd-config")
    }

    func run() throws {
        var failures = 0
        func report(_ ok: Bool, _ name: String, _ detail: String, fix: String = "") {
            print("\(ok ? "ok  " : "FAIL") \(name): \(detail)\(ok || fix.isEmpty ? "" : " -- fix: \(fix)")")
            if !ok { failures += 1 }
        }

        let config: LoginConfig
        do {
            config = try global.loadConfig()
            // Logins use the backend each registration records; `backend` is only the default
            // for new registrations, so its absence is not a failure.
            report(true, "config", config.backend.isEmpty
                       ? "\(global.config) parsed; no default backend (register needs --backend)" : "\(global.config) parsed")
        } catch {
            report(false, "config", "\(error)", fix: "correct the line named above")
            throw ExitWithStatus(.config)
        }

        report(getuid() == 0, "root", getuid() == 0 ? "running as root" : "not running as root",
               fix: "run `sudo mpinctl doctor`")

        var st = stat()
        if lstat(config.store, &st) != 0 {  // lstat: a symlinked store is refused by every login too
            report(false, "store", "\(config.store) does not exist",
                   fix: "mkdir -m 700 \(config.store) && chown root:root \(config.store)")
        } else {
            let private_ = st.st_uid == 0 && (st.st_mode & 0o077) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
            report(private_, "store", "\(config.store) owner uid \(st.st_uid), mode \(String(st.st_mode & 0o777, radix: 8))",
                   fix: "chown root:root \(config.store) && chmod 700 \(config.store)")
        }

        let moduleDirectory = PAMReferences.moduleDirectory()
        let module = moduleDirectory.map { $0 + "/pam_mpin.so" }.flatMap { System.fileExists($0) ? $0 : nil }
        report(module != nil, "module", module ?? "pam_mpin.so is not installed in \(moduleDirectory ?? "the PAM module directory")",
               fix: "run `make install`")

        // Each pam.d line naming pam_mpin, with the file libpam loads for it.
        let references = PAMReferences.scan(directory: pamDir, moduleDirectory: moduleDirectory ?? "/lib/security")
        if references.isEmpty { report(true, "pam.d", "no file in \(pamDir) uses pam_mpin yet") }
        for r in references {
            let exists = System.fileExists(r.resolved)
            let which = r.resolved == module ? "the installed module" : "not the installed module"
            report(exists, "pam.d", "\(pamDir)/\(r.place): \(r.written) loads \(r.resolved)"
                   + (exists ? " (\(which))" : ", which does not exist"),
                   fix: r.written.hasPrefix("/") ? "correct the path or run `make install`"
                                                 : "write `pam_mpin.so` (installed) or an absolute path; relative paths are taken from \(moduleDirectory ?? "the module directory")")
        }

        checkStacks { report($0, $1, $2, fix: $3) }

        // pam_mpin.so runs mpin-pam-helper for every call; it refuses one it cannot trust.
        var helpers = Set(references.map(\.helper))
        if module != nil { helpers.insert(PAMReferences.installedHelper) }
        for helper in helpers.sorted() {
            let problem = PAMReferences.helperProblem(helper)
            let fix = helper == PAMReferences.installedHelper ? "run `make install` (or reinstall libpam-mpin)"
                : PAMReferences.helperDirectoryProblem(helper) != nil
                ? "keep the helper in directories owned by root, writable only by root, named without symbolic links"
                : problem == "is a symbolic link" ? "name the file itself in helper= (pam_mpin.so follows no symbolic link)"
                : "chown root \(helper) && chmod 755 \(helper)"
            report(problem == nil, "helper", "\(helper)" + (problem.map { " \($0)" } ?? ""), fix: fix)
        }

        // Every registration in the store (readable only by root).
        if getuid() == 0, let sdk = try? global.sdk(config) {
            RegistrationCheck(config: config, platform: global.platform(config), sdk: sdk).run { report($0, $1, $2, fix: $3) }
        }

        checkOffline(config) { report($0, $1, $2, fix: $3) }

        guard !config.backend.isEmpty else {
            report(true, "backend", "no default backend configured; not checked")
            if failures > 0 { throw ExitWithStatus(.failed) }
            return
        }

        // Plain http to an IP address never loads libcurl; https and host names need it.
        let curl = CurlHTTPTransport.libraryVersion
        let needsCurl = !PlainHTTPTransport.canSend(to: config.backend.trimmingSuffix("/") + "/")
        report(curl != nil || !needsCurl, "libcurl",
               curl ?? (needsCurl ? "libcurl.so.4 could not be loaded (logins answer PAM_AUTHINFO_UNAVAIL)"
                                  : "not installed; not needed for \(config.backend)"),
               fix: "apt-get install libcurl4")

        // Backend reachability, TLS and clock skew from one clientSettings request.
        let transport = global.platform(config).transport
        let url = config.backend.trimmingSuffix("/") + "/" + config.rpsPrefix + "/clientSettings"
        let started = System.unixTime()
        do {
            let response = try transport.send(HTTPRequest(method: .get, url: url))
            report(response.status == 200, "backend", "\(url) answered HTTP \(response.status)",
                   fix: "check the backend URL and that the server runs")
            let https = config.backend.hasPrefix("https://")
            // Plain http is fine to this machine itself: the host part, up to the port or path,
            // exactly 127.0.0.1, localhost or [::1] (not http://localhost.example.org, nor
            // http://localhost@elsewhere, whose host is elsewhere).
            let local: Bool
            if case .success(let origin) = URLOrigin.parse(config.backend) { local = origin.isLoopback } else { local = false }
            report(https || local, "tls", https ? "certificate verified" : "plain http",
                   fix: "use an https backend URL outside a single machine")
            if let date = response.header("date").flatMap(System.httpDate) {
                let skew = date - started
                report(abs(skew) < 60, "clock", "skew \(skew) s against the server",
                       fix: "synchronise the clock (systemd-timesyncd or chrony)")
            } else {
                report(true, "clock", "the server sent no Date header; not checked")
            }
        } catch {
            report(false, "backend", error.description, fix: "check the URL, the network, and the CA settings (cacert/capath)")
        }
        if failures > 0 { throw ExitWithStatus(.failed) }
    }
}

extension Doctor {
    /// Offline logins: off, or on with a TPM that answers (and its dictionary-attack state).
    /// Without a usable TPM they are off, whatever mpin.conf says: nothing falls back to a
    /// verifier on disk (docs/SECURITY.md, "Offline logins").
    func checkOffline(_ config: LoginConfig, report: (Bool, String, String, String) -> Void) {
        guard config.offline else {
            report(true, "offline", "offline logins off (offline = no)", "")
            return
        }
        let tpm: HostTPM
        do {
            tpm = try HostTPM(tcti: config.tpm)
        } catch {
            report(false, "offline", "offline = yes, but \(error): offline logins are off until a TPM answers at tpm = \(config.tpm)",
                   "check the TPM (ls -l /dev/tpmrm0) and tpm2-tss (apt-get install libtss2-esys-3.0.2-0 libtss2-tctildr0), or set offline = no")
            return
        }
        let days = Double(config.offlineMaxAge) / 86_400
        report(true, "offline", "on: up to offline_max_age (\(days < 1 ? "\(config.offlineMaxAge) s" : "\(days) days")) after a user's "
               + "last online login here, \(config.offlineAttempts) wrong offline PINs (offline_attempts)", "")
        do {
            let state = try tpm.lockoutState()
            report(!state.inLockout, "tpm", "\(config.tpm) answers; dictionary-attack protection: \(state.failedTries) of "
                   + "\(state.maxTries) wrong authorisations counted, one forgiven every \(state.recoverySeconds) s"
                   + (state.inLockout ? "; IN LOCKOUT: no offline login until it ends" : ""),
                   "wait \(state.recoverySeconds) s, or clear it as the TPM's owner (tpm2_dictionarylockout -c)")
        } catch {
            report(false, "tpm", "\(config.tpm): \(error)", "check the TPM")
        }
    }

    /// What each service's auth stack does when pam_mpin cannot say yes, and the combinations
    /// that let a login through without the PIN (PAMStackAnalysis); for sshd, the settings
    /// without which pam_mpin is never asked (SSHDCheck).
    func checkStacks(report: (Bool, String, String, String) -> Void) {
        let read: (String) -> String? = { path in
            System.readFile(path, limit: 1 << 20).flatMap { String(validating: $0, as: UTF8.self) }
        }
        let sshdUsesMPin = PAMStack.auth(service: "sshd") { read($0.hasPrefix("/") ? $0 : pamDir + "/" + $0) }
            .modules.contains(where: \.isMPin)
        var sshd: SSHDCheck?
        // Reported after the stacks, with sshd's other lines.
        var sshdLines: [(ok: Bool, detail: String, fix: String)] = []
        if sshdUsesMPin, let binary = SSHDCheck.installedSSHD() {
            let run = SSHDCheck.effectiveSettings(sshd: binary, config: sshdConfig)
            if run.status == 0 {
                sshd = SSHDCheck(output: run.output)
                sshdLines = sshd?.results.map { ($0.ok, $0.detail, $0.fix) } ?? []
            } else {
                let why = run.error.split(separator: "\n").first.map(String.init) ?? "exit status \(run.status)"
                // Debian's sshd makes /run/sshd when its service starts: on a host where sshd has
                // not run since boot, `sshd -T` fails for that alone, not for its settings.
                let fix = why.hasPrefix("Missing privilege separation directory")
                    ? "sshd has not run since boot (its service makes /run/sshd): start it (`systemctl start ssh`) or `mkdir -p -m 755 /run/sshd`, then run doctor again"
                    : "run `sshd -t` as root and correct what it names"
                sshdLines = [(false, "`\(binary) -T` failed: \(why)", fix)]
            }
        } else if sshdUsesMPin {
            sshdLines = [(true, "\(pamDir)/sshd loads pam_mpin, but sshd is not installed; its settings are not checked", "")]
        }
        // Root authenticates through sshd's stack only with PermitRootLogin yes, and never through
        // sudo's (sudo asks the calling user, and root is not asked at all).
        let rootAuthenticates: (String) -> Bool = { service in
            service == "sshd" ? sshd?.rootUsesPAM ?? true : !service.hasPrefix("sudo")
        }
        let reports = PAMStackAnalysis.analyse(directory: pamDir, rootAuthenticates: rootAuthenticates, readFile: read,
                                               exemptsByConfig: { line in
            // The configuration the line's helper would read (unreadable or invalid: no exemption
            // assumed here; the config checks above report it).
            let options = ModuleOptions(arguments: line.arguments)
            let config = try? options.loadConfig { path throws(ConfigError) in read(path) }
            return !(config?.exemptGroups.isEmpty ?? true)
        }, mustGetIn: mustGetIn(read: read, rootAuthenticates: rootAuthenticates))
        for r in reports {
            report(r.findings.isEmpty && r.problems.isEmpty && r.lockouts.isEmpty, "stack", "\(r.service): \(r.summary)", "see the lines below")
            for lockout in r.lockouts {
                report(false, "lockout", "\(r.service): \(lockout.message)", lockout.fix)
            }
            for problem in r.problems {
                report(false, "stack", "\(r.service): \(problem)", "correct the line; libpam cannot use it as written")
            }
            for finding in r.findings {
                report(false, "fail-open", "\(r.service): \(finding.message)", finding.fix)
            }
        }
        for line in sshdLines { report(line.ok, "sshd", line.detail, line.fix) }
    }
}

extension Doctor {
    /// Root, and the administrator who ran doctor through sudo (SUDO_USER), when they have no
    /// registration in the store: each must still get in with the password, or enabling the
    /// module locks them out. What pam_mpin answers them on a line is its policy for that line
    /// (EnforcementPolicy: nouserok, nouserok_root, require_group with their groups).
    func mustGetIn(read: @escaping (String) -> String?, rootAuthenticates: @escaping (String) -> Bool) -> [PAMStackAnalysis.Unregistered] {
        var registered: Set<String> = []
        if let config = try? global.loadConfig(),
           let all = try? AccountMap(storage: global.platform(config).nonSecureStorage).all() {
            registered = Set(all.filter { !$0.account.revoked }.map(\.unixUser))
        }
        var accounts: [(account: UnixAccount, authenticates: (String) -> Bool)] = []
        if !registered.contains("root"), let root = try? UnixAccount.lookup("root") { accounts.append((root, rootAuthenticates)) }
        if let name = System.environment("SUDO_USER"), name != "root", !registered.contains(name),
           let admin = try? UnixAccount.lookup(name) {
            accounts.append((admin, { _ in true }))
        }
        return accounts.map { entry in
            let account = entry.account
            return PAMStackAnalysis.Unregistered(who: account.uid == 0 ? "root" : "\(account.name) (who ran doctor through sudo)", answer: { line in
                let options = ModuleOptions(arguments: line.arguments)
                guard let config = try? options.loadConfig(readFile: { path throws(ConfigError) in read(path) }) else { return .authErr }
                let policy = EnforcementPolicy(options: options, config: config)
                let groups = policy.groupsToResolve
                let memberOf = groups.isEmpty ? [] : ((try? UnixGroups.membership(of: account, in: groups)) ?? groups)
                switch policy.unregistered(uid: account.uid, standing: policy.standing(memberOf: memberOf)) {
                case .ignore: return .ignore
                case .unknown: return .userUnknown
                case .refuse: return .authErr
                }
            }, authenticates: entry.authenticates)
        }
    }
}

extension String {
    func trimmingSuffix(_ s: String) -> String {
        var t = self
        while t.hasSuffix(s) { t.removeLast(s.count) }
        return t
    }
}
