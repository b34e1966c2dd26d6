#if canImport(Glibc)
import Glibc
#endif
import MPinCLI
import MPinClient
import MPinCrypto
import MPinJSON
import MPinLinux
import MPinLogin
import MPinWire

struct Register: CLICommand {
    static let declaration = CommandDeclaration(
        "register", abstract: "Register an M-Pin identity for a Unix user and set its PIN.",
        arguments: [.argument("user", help: "The Unix user who will log in with the identity.")],
        options: GlobalOptions.declarations + [
            .option("identity", required: true, help: "The M-Pin identity (e.g. an e-mail address)."),
            .option("backend", help: "The backend URL (overrides the configuration)."),
            .option("activation-code", help: "The activation code the administrator of the backend issued."),
            .option("device-name", help: "A device name sent to the backend."),
            .option("wait", default: "300", help: "Seconds to wait for the identity to be verified."),
            .option("verdict-key", help: "The key `mpin-server verdict-key` prints on the server: the backend must announce this one."),
            .flag("join-group", help: "Add the user to the group `mpin` (the packaged PAM profile's require_group) without asking."),
        ])
    let global: GlobalOptions
    let user: String, identity: String, backend: String?, activationCode: String?, deviceName: String?, verdictKey: String?
    let wait: Int
    let joinGroup: Bool

    init(_ line: ParsedCommandLine) throws {
        global = GlobalOptions(line)
        user = line.argument("user")
        identity = line.requiredValue("identity")
        backend = line.value("backend")
        activationCode = line.value("activation-code")
        deviceName = line.value("device-name")
        wait = try line.integer("wait")
        verdictKey = line.value("verdict-key")
        joinGroup = line.flag("join-group")
    }

    func run() throws {
        try requireRoot()
        let config = try global.loadConfig(backend: backend)
        guard !config.backend.isEmpty else { throw CLIError(status: .config, message: "CONFIG_ERROR: no backend; give --backend") }
        let user = try unixName(self.user, registering: true)
        let accounts = AccountMap(storage: global.platform(config).nonSecureStorage)
        if let existing = try accounts.account(for: user) {
            throw CLIError(status: .failed, message: "FLOW_ERROR: \(user) is already registered as \(existing.identity); run `mpinctl delete \(user)` first")
        }
        let sdk = try global.sdk(config)
        // The token logs in to this host only: the backend marks its mpinId so
        // (MPinIdentity.hostScope), and a proof made with it approves no web login.
        sdk.registersHostTokens = true
        // The first node that answers takes the registration; every node serves it later.
        var node = config.backends.first ?? config.backend
        var status = MPinStatus.ok
        for candidate in config.backends.isEmpty ? [config.backend] : config.backends {
            node = candidate
            if !config.authenticatesByTLS(candidate), !sdk.confine(toOriginOf: candidate) {
                throw CLIError(status: .failed, message: "FLOW_ERROR: \(candidate) is not an absolute http(s) URL")
            }
            status = sdk.setBackend(candidate, rpsPrefix: config.rpsPrefix)
            guard status.code == .networkError || status.code == .httpServerError else { break }
        }
        try check(status)
        try checkAnnouncedVerdictKey(sdk.clientSettingsDocument?["verdictKey"]?.stringValue ?? "", expected: expectedVerdictKey(verdictKey, config),
                                     backend: node, config: config)
        // A stale, unfinished registration of the same identity is replaced.
        for u in sdk.listUsers().1 where u.id == identity && u.state != .registered { sdk.deleteUser(u) }
        let mpinUser = sdk.makeNewUser(id: identity, deviceName: deviceName ?? "")
        let started = sdk.startRegistration(mpinUser, activateCode: activationCode ?? "")
        if started.code == .identityNotAuthorized, let code = activationCode, !code.isEmpty {
            throw CLIError(status: .failed, message: "IDENTITY_NOT_AUTHORIZED: the backend refused the registration: the activation "
                           + "code is wrong, expired or used. Nothing was registered here; ask the administrator for a new one "
                           + "(mpin-server user add \(identity))")
        }
        try check(started)
        try confirm(sdk, mpinUser)
        let pin = try global.readNewPIN("M-Pin PIN", for: identity, length: config.pinLength)
        try check(sdk.finishRegistration(mpinUser, pin: pin))
        let fingerprint = MPinIdentity.fingerprint(mpinIdHex: mpinUser.mpinIdHex) ?? ""
        try accounts.set(.init(identity: identity, backend: node, mpinIdHash: fingerprint,
                               uid: try? UnixAccount.lookup(user).uid), for: user)
        // A new registration starts without offline logins (docs/SECURITY.md, "Offline logins").
        try OfflineLogins.forget(identity: identity, storage: global.platform(config).nonSecureStorage)
        // This host's key for access numbers (PROTOCOL.md §5.8); a device login makes it otherwise.
        _ = try? HostKeyStore.loadOrCreate(global.platform(config).secureStorage)
        if !mpinUser.verdictKeyHex.isEmpty { print("verdict key \(mpinUser.verdictKeyHex)") }
        print("REGISTERED \(user) as \(identity) on \(node)")
        offerGroup(user)
    }

    /// The packaged PAM profile asks M-Pin of the members of `mpin` only (require_group=mpin),
    /// so a registration does nothing until its user joins: offered here, on a terminal asked,
    /// with --join-group done; the group itself comes with libpam-mpin.
    func offerGroup(_ user: String) {
        let group = "mpin"
        guard let account = try? UnixAccount.lookup(user),
              let members = try? UnixGroups.membership(of: account, in: [group]), members.isEmpty,
              getgrnam(group) != nil else { return }
        var join = joinGroup
        if !join, isatty(0) == 1, isatty(1) == 1 {
            print("Add \(user) to the group \(group), so that the packaged PAM profile (require_group=\(group)) asks \(user) for the PIN? [y/N] ",
                  terminator: "")
            fflush(nil)
            let answer = readLine() ?? ""
            join = answer.lowercased().hasPrefix("y")
        }
        guard join else {
            print("note: \(user) is not in the group \(group); the packaged PAM profile asks M-Pin only of its members: `gpasswd -a \(user) \(group)`")
            return
        }
        let run = ChildProcess.run("/usr/bin/gpasswd", ["-a", user, group])
        if run.status == 0 { print("added \(user) to the group \(group)") }
        else { printError("warning: `gpasswd -a \(user) \(group)` failed: \(run.error.split(separator: "\n").first.map(String.init) ?? "exit status \(run.status)")") }
    }

    /// ConfirmRegistration, polling while the identity is not verified yet.
    func confirm(_ sdk: MPinSDK, _ u: MPinUser) throws {
        let deadline = System.monotonicSeconds() + Double(wait)
        var said = false
        while true {
            let status = sdk.confirmRegistration(u)
            if status.isOK { if said { print("") }; return }
            guard status.code == .identityNotVerified, System.monotonicSeconds() < deadline else { try check(status); return }
            // A right activation code verifies the identity at once: waiting would only hide
            // that this one was not accepted.
            if let code = activationCode, !code.isEmpty {
                throw CLIError(status: .failed, message: "IDENTITY_NOT_VERIFIED: the backend did not accept the activation code "
                               + "(wrong, expired or used); nothing was registered here. Ask the administrator for a new one "
                               + "(mpin-server user invite \(u.id)), or register without --activation-code and have the "
                               + "registration activated on the server")
            }
            if !said {
                // The administrator activates this registration by its fingerprint, not all of
                // the identity's (docs/SECURITY.md §6.2): tell it to them.
                let fingerprint = MPinIdentity.fingerprint(mpinIdHex: u.mpinIdHex) ?? "-"
                print("waiting for \(u.id) to be verified: an administrator runs "
                      + "`mpin-server user activate \(u.id) --registration \(fingerprint)` ", terminator: "")
                said = true
            }
            print(".", terminator: "")
            fflush(nil)
            System.sleep(seconds: 2)
        }
    }
}

struct List: CLICommand {
    static let declaration = CommandDeclaration(
        "list", abstract: "List the Unix users registered in the store.",
        options: GlobalOptions.declarations + [.flag("json", help: "Output JSON.")])
    let global: GlobalOptions
    let json: Bool

    init(_ line: ParsedCommandLine) {
        global = GlobalOptions(line)
        json = line.flag("json")
    }

    func run() throws {
        try requireRoot()
        let config = try global.loadConfig()
        let rows = try Rows.all(global, config)
        if json {
            let doc = JSONValue.array(rows.map { r in
                .object([("user", .string(r.user)), ("identity", .string(r.identity)),
                         ("backend", .string(r.backend)), ("state", .string(r.state))])
            })
            print(doc.serializedString)
        } else {
            for r in rows { print("\(r.user)\t\(r.identity)\t\(r.backend)\t\(r.state)") }
        }
    }
}

/// One Unix user's registration as the store holds it.
struct Rows {
    let user: String, identity: String, backend: String, state: String

    static func all(_ global: GlobalOptions, _ config: LoginConfig) throws -> [Rows] {
        let sdk = try global.sdk(config)
        return try AccountMap(storage: global.platform(config).nonSecureStorage).all().map { e in
            let u = sdk.listUsers(backend: e.account.backend).1.first { $0.id == e.account.identity }
            return Rows(user: e.unixUser, identity: e.account.identity, backend: e.account.backend,
                        state: e.account.revoked ? "REVOKED" : u?.state.rawValue ?? (e.account.linked ? "LINKED" : "MISSING"))
        }
    }
}

struct Show: UserCommand {
    static let declaration = userDeclaration("show", abstract: "Show one Unix user's registration.")
    let global: GlobalOptions
    let user: String

    func run() throws {
        try requireRoot()
        let config = try global.loadConfig()
        let user = try unixName(self.user)
        guard let r = try Rows.all(global, config).first(where: { sameUnixName($0.user, user) }) else {
            throw CLIError(status: .failed, message: "USER_UNKNOWN: \(user) is not registered")
        }
        print("user: \(r.user)\nidentity: \(r.identity)\nbackend: \(r.backend)\nstate: \(r.state)")
        // The offline record, if any: when the online login it holds was (offline_max_age
        // counts from it).
        if let online = try OfflineLogins.recordTime(identity: r.identity, storage: global.platform(config).nonSecureStorage) {
            print("offline: record of \(OfflineLogins.utcText(online))" + (config.offline ? "" : " (offline = no: not used)"))
        } else if config.offline {
            print("offline: no record (made at the next online login)")
        }
    }
}

struct Delete: UserCommand {
    static let declaration = userDeclaration("delete", abstract: "Delete a Unix user's registration and token (no server call).")
    let global: GlobalOptions
    let user: String

    func run() throws {
        let (config, account, sdk) = try global.registeredUser(user)
        for u in sdk.listUsers(backend: account.backend).1 where u.id == account.identity { try check(sdk.deleteUser(u)) }
        try OfflineLogins.forget(identity: account.identity, storage: global.platform(config).nonSecureStorage)
        try AccountMap(storage: global.platform(config).nonSecureStorage).set(nil, for: try unixName(user))
        print("DELETED \(user)")
    }
}

struct Auth: UserCommand {
    static let declaration = userDeclaration("auth", abstract: "Authenticate a Unix user exactly as the PAM module does; prints the outcome.")
    let global: GlobalOptions
    let user: String

    func run() throws {
        try requireRoot()
        let config = try global.loadConfig()
        let platform = global.platform(config)
        var login = Login(config: config, platform: platform)
        if config.offline {
            let offline = OfflineLogins(config: config, storage: platform.nonSecureStorage, lockDirectory: config.store)
            offline.service = "mpinctl"
            login.offline = offline
        }
        var failure: (any Error)? = nil
        let (outcome, _) = login.run(unixUser: try unixName(user)) {
            do { return try global.readPIN(config.prompt) } catch { failure = error; return nil }
        }
        for note in login.offline?.notes ?? [] { printError(note) }
        print(login.offline?.use == .checked ? "\(outcome.name) (offline)" : outcome.name)
        if let failure { throw failure }
        switch outcome {
        case .success: return
        case .unavailable(let why): throw CLIError(status: .unavailable, message: "UNAVAILABLE: \(why)")
        case .failed(let why): throw CLIError(status: .failed, message: "FAILED: \(why)")
        default: throw ExitWithStatus(.failed)
        }
    }
}

struct OTP: UserCommand {
    static let declaration = userDeclaration("otp", abstract: "Authenticate and print a one-time password from the backend.")
    let global: GlobalOptions
    let user: String

    func run() throws {
        let (config, account, sdk) = try global.registeredUser(user)
        try check(sdk.setBackend(account.backend, rpsPrefix: config.rpsPrefix))
        guard let u = sdk.listUsers().1.first(where: { $0.id == account.identity }) else {
            throw CLIError(status: .failed, message: "USER_UNKNOWN: no registration for \(account.identity)")
        }
        try printOneTimePassword(sdk, u) { try global.readPIN(config.prompt) }
    }
}

struct RegCode: UserCommand {
    static let declaration = userDeclaration("regcode", abstract: "Authenticate and print a registration code with which another device registers the same identity.")
    let global: GlobalOptions
    let user: String

    func run() throws {
        let (config, identity, mfa, u) = try global.mfaUser(user)
        try check(mfa.startAuthenticationRegCode(u))
        let pin = try global.readPIN(config.prompt)
        let (status, code) = mfa.finishAuthenticationRegCode(u, pin0: pin, pin1: SecretBytes())
        try check(status)
        try check(code.status)
        print("\(code.otp) (valid for \(code.ttlSeconds) s; register the other device with it for \(identity))")
    }

    /// The core's key of a backend URL, as `MPinUser.backend` holds it: no scheme, no trailing `/`.
    static func backendKey(_ url: String) -> String {
        var s = Substring(url)
        while s.hasSuffix("/") { s = s.dropLast() }
        for scheme in ["https://", "http://"] where s.hasPrefix(scheme) { s = s.dropFirst(scheme.count) }
        return String(s)
    }
}

struct Backends: CLICommand {
    static let declaration = CommandDeclaration(
        "backends", abstract: "List the backends the store holds registrations for.", options: GlobalOptions.declarations)
    let global: GlobalOptions

    init(_ line: ParsedCommandLine) { global = GlobalOptions(line) }

    func run() throws {
        try requireRoot()
        let (status, keys) = try global.sdk(try global.loadConfig()).listBackends()
        try check(status)
        for k in keys { print(k) }
    }
}

struct TestBackend: CLICommand {
    static let declaration = CommandDeclaration(
        "test-backend", abstract: "Check that a URL is an M-Pin backend.",
        arguments: [.argument("url")], options: GlobalOptions.declarations)
    let global: GlobalOptions
    let url: String

    init(_ line: ParsedCommandLine) {
        global = GlobalOptions(line)
        url = line.argument("url")
    }

    func run() throws {
        let config = try global.loadConfig()
        let sdk = MPinSDK(context: global.platform(config))
        for d in config.trustedDomains { sdk.addTrustedDomain(d) }
        try check(sdk.testBackend(url, rpsPrefix: config.rpsPrefix))
        print("OK \(url)")
    }
}

struct Version: CLICommand {
    static let declaration = CommandDeclaration("version", abstract: "Print the version.")
    init(_ line: ParsedCommandLine) {}
    func run() { print("mpinctl \(MPinSDK.version)") }
}

/// What register and link pin is what the backend announces (PROTOCOL.md §4.5.1), but only
/// when something other than the answer itself says who answered: `--verdict-key` (or
/// `verdict_key` in mpin.conf), read on the server itself, which the announced key must equal;
/// or TLS with the CA named in mpin.conf. A key learned over plain http (or https against the
/// system's store) is never pinned: whoever held the backend's port at that moment would log
/// in as the user with any PIN whenever he holds it again (docs/SECURITY.md §3).
/// The verdict key a registration or link must find announced: `--verdict-key`, else
/// `verdict_key` in mpin.conf, else none.
func expectedVerdictKey(_ option: String?, _ config: LoginConfig) -> String? {
    option ?? (config.verdictKey.isEmpty ? nil : config.verdictKey)
}

func checkAnnouncedVerdictKey(_ announced: String, expected: String?, backend: String, config: LoginConfig) throws {
    if let expected {
        guard Verdict.isPublicKey(expected) else {
            throw CLIError(status: .failed, message: "FLOW_ERROR: --verdict-key takes the 130 hex digits `mpin-server verdict-key` prints")
        }
        guard announced.lowercased() == expected.lowercased() else {
            throw CLIError(status: .failed, message: "FLOW_ERROR: \(backend) announces another verdict key than --verdict-key (or verdict_key in mpin.conf): "
                           + "it may not be your server; nothing was registered")
        }
    } else if !config.authenticatesByTLS(backend) {
        throw CLIError(status: .failed, message: "FLOW_ERROR: nothing authenticates \(URLHost.of(backend)) (plain http, or https "
                       + "without cacert or capath in mpin.conf), so the key it announces cannot be pinned: give --verdict-key "
                       + "(or verdict_key in mpin.conf) with what `mpin-server verdict-key` prints on the server; nothing was registered")
    }
}

