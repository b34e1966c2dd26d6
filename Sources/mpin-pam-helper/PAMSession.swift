import CPAMProtocol
import MPinClient
import MPinCrypto
import MPinLinux
import MPinLogin
import MPinPOSIX
#if canImport(Glibc)
import Glibc
#endif

/// Called first thing in main.swift, before any secret can reach this process: no core file,
/// no ptrace or /proc/PID/mem by the caller's user (a screen locker runs the helper as the
/// user), RLIMIT_CORE 0 (docs/SECURITY.md §6.11). What failed is logged once the channel is up.
/// Memory is locked later, by `lockMemoryForSecrets()`, only when a PIN is to be read.
func hardenHelperProcess() {
    HelperHardening.failure = ProcessHardening.apply(lockingMemory: false)
}

/// Before a PIN is read (and with it the token used): the pages of this process stay out of
/// swap (docs/SECURITY.md §6.11). A failure is logged, and the login goes on. Only
/// `MemoryLockSlots.count` helpers hold locked memory at once, however many prompts are left
/// waiting; past that the login goes on without the lock, and the log says so.
func lockMemoryForSecrets(_ session: PAMSession) {
    guard ProcessHardening.wouldLockMemory else { return }
    guard MemoryLockSlots.take() else {
        session.log(LOG_NOTICE, "memory not locked: \(MemoryLockSlots.count) logins already hold locked memory")
        return
    }
    if let failure = ProcessHardening.lockMemory() {
        session.log(LOG_WARNING, "process hardening incomplete: \(failure.steps.joined(separator: "; "))")
    }
}

enum HelperHardening {
    /// Set once, before anything else runs, on the helper's one thread.
    nonisolated(unsafe) static var failure: ProcessHardening.Failure?
}

/// One call into pam_mpin.so (pam_sm_authenticate or pam_sm_acct_mgmt), served in this
/// process: PAM items, the conversation and syslog are the module's, over `channel`. The work
/// is in MPinLogin; this file maps it to PAM.
struct PAMSession {
    let channel: ModuleChannel
    let options: ModuleOptions
    /// The flags of the PAM call (PAM_SILENT, PAM_DISALLOW_NULL_AUTHTOK), as the module got them.
    let flags: Int32

    init(channel: ModuleChannel, arguments: [String], flags: Int32 = 0) {
        self.channel = channel
        self.options = ModuleOptions(arguments: arguments)
        self.flags = flags
    }

    /// One syslog line. Control characters (a PAM_USER from a remote client may contain line
    /// breaks) become `?`, so no value can forge or split a log line.
    func log(_ priority: Int32, _ line: String) {
        var clean = String.UnicodeScalarView()
        for scalar in line.unicodeScalars.prefix(2048) {
            clean.append(scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) ? "?" : scalar)
        }
        channel.log(priority: priority, String(clean))
    }
    func debug(_ line: String) { if options.debug { log(LOG_DEBUG, line) } }

    /// Whether the application asked for no messages (PAM_SILENT in the call's flags): then
    /// nothing but prompts goes to the conversation (docs/SECURITY.md §6.10).
    var silent: Bool { flags & Int32(PAM_SILENT) != 0 }

    /// A PAM_TEXT_INFO or PAM_ERROR_MSG message, unless the call is silent.
    func tell(_ style: Int32, _ message: String) {
        guard !silent else { return }
        _ = channel.converse(style: style, message)
    }

    func logHardeningFailure() {
        guard let failure = HelperHardening.failure else { return }
        log(LOG_WARNING, "process hardening incomplete: \(failure.steps.joined(separator: "; "))")
    }

    func loadConfig() -> LoginConfig? {
        for arg in options.unknown { log(LOG_WARNING, "ignoring unknown option \"\(arg)\"") }
        do {
            // No backend is required here: a login uses the backend its registration records;
            // `backend` is the default for new registrations (mpinctl register).
            let (config, verdict) = try options.loadConfigAndVerdict()
            // The file as just validated, for pam_mpin.so's next user with no registration
            // (ConfigVerdict); only root can write the store.
            if geteuid() == 0 { verdict.record(in: platform(config).nonSecureStorage) }
            return config
        } catch {
            log(LOG_ERR, "configuration error: \(error.description)")
            return nil
        }
    }

    /// The Unix account PAM_USER names, resolved by the name service (getpwnam_r), whose
    /// `pw_name` keys the registrations (docs/SECURITY.md §6.4); or, when there is none, the PAM
    /// code to return, with its one log line. A name that is not valid UTF-8 is refused
    /// (PAM_USER_UNKNOWN whatever `nouserok` says: no registration can have it); a name the
    /// name service does not know is an unknown user; a failing name service is
    /// `unavailableCode`.
    func unixAccount(unknownCode: Int32, unavailableCode: Int32) -> (account: UnixAccount?, code: Int32) {
        guard let item = channel.item(PAM_USER) else {
            log(LOG_ERR, "could not get the user name")
            return (nil, PAM_SERVICE_ERR)
        }
        let bytes = item.withUnsafeBytes { Array($0) }
        do {
            return (try UnixAccount.lookup(bytes: bytes), PAM_SUCCESS)
        } catch {
            // Decoded only for the log line, which masks control characters.
            let shown = String(decoding: bytes, as: UTF8.self)
            switch error {
            case .notUTF8, .accountNameNotUTF8:
                log(LOG_NOTICE, "user=\(shown) outcome=USER_UNKNOWN (\(error))")
                return (nil, PAM_USER_UNKNOWN)
            case .unknown:
                log(LOG_NOTICE, "user=\(shown) outcome=USER_UNKNOWN (no such Unix account)")
                return (nil, unknownCode)
            case .nameService:
                log(LOG_ERR, "user=\(shown) outcome=UNAVAILABLE (\(error))")
                return (nil, unavailableCode)
            }
        }
    }

    /// Why the store is closed to this process, or nil: a caller that is not root (screen
    /// lockers run PAM as the user) in token mode, whose token must be read and written in
    /// root's store; or, in any mode, a store that answers EACCES/EPERM. Then the module stays
    /// out of the way (PAM_IGNORE: the stack's next module, usually the password, decides;
    /// docs/SECURITY.md §6.6), except for a member of a required group (EnforcementPolicy).
    /// `account` gets the user's entry as read here, so that `mode = auto` needs no second read.
    func storeClosed(_ config: LoginConfig, user: String, account: inout AccountMap.Account?) -> String? {
        let euid = geteuid()
        if euid != 0 && config.mode != .device {
            return "the caller runs as uid \(euid), not root: the store is root's"
        }
        do {
            account = try AccountMap(storage: platform(config).nonSecureStorage).account(for: user)
        } catch where error.isPermissionDenied {
            return "the store refuses uid \(euid): \(error.description)"
        } catch {
            // Any other store error is the login's to report.
        }
        return nil
    }

    func platform(_ config: LoginConfig) -> LinuxPlatform {
        let budget = Duration.milliseconds(Int64(config.timeout * 1000))
        return LinuxPlatform(storageDirectory: config.store, requiredOwner: 0,
                             http: .init(caFile: config.caFile.isEmpty ? nil : config.caFile,
                                         caDirectory: config.caPath.isEmpty ? nil : config.caPath,
                                         connectTimeout: min(budget, .milliseconds(Int64(config.connectTimeout * 1000))), timeout: budget),
                             storeLockTimeout: .seconds(1))
    }

    func authenticate() -> Int32 {
        let started = MonotonicInstant.now
        logHardeningFailure()
        guard let config = loadConfig() else { return PAM_SERVICE_ERR }
        allowTime(config)
        let policy = EnforcementPolicy(options: options, config: config)
        let (account, refusal) = unixAccount(unknownCode: code(policy.unregistered(uid: nil, standing: .ordinary)),
                                             unavailableCode: PAM_AUTHINFO_UNAVAIL)
        guard let account else { return refusal }
        let user = account.name
        debug("authenticating \(user) (uid \(account.uid))")
        guard let standing = standing(policy, account) else { return PAM_AUTHINFO_UNAVAIL }
        if case .exempt(let group) = standing {
            log(LOG_NOTICE, "user=\(user) outcome=IGNORED (a member of exempt_group \(group): not asked for M-Pin)")
            return PAM_IGNORE
        }
        var entry: AccountMap.Account? = nil
        if let why = storeClosed(config, user: user, account: &entry) {
            guard policy.mayStepAside(standing: standing) else {
                log(LOG_NOTICE, "user=\(user) outcome=AUTH_ERR (\(standing.described) must pass M-Pin, but \(why))")
                return PAM_AUTH_ERR
            }
            log(LOG_NOTICE, "user=\(user) outcome=IGNORED (\(why))")
            return PAM_IGNORE
        }
        let unregistered = policy.unregistered(uid: account.uid, standing: standing)
        // A registration made for an account with another uid belongs to an account that was
        // deleted: a later account of the same name does not inherit it (it is a user with no
        // registration, as the policy says), and `mpinctl doctor` names it.
        if let registered = entry?.uid, registered != account.uid {
            let code = code(unregistered)
            log(LOG_NOTICE, "user=\(user) identity=\(entry?.identity ?? "-") outcome=USER_UNKNOWN (the registration was made "
                + "for uid \(registered), this account is uid \(account.uid): `mpinctl delete \(user)`)")
            return code
        }
        // `mode = auto`: the store says which (a link, or a token); an unreadable store is the
        // token login's to report.
        let linked = config.mode == .auto && entry?.linked == true
        if config.mode.resolved(linked: linked) == .device {
            if config.mode == .auto { allowTime(config, device: true) }
            return approveOnDevice(config: config, user: user, unregistered: unregistered, started: started)
        }
        // `enrol`: a user with no registration may enrol here (SelfEnrolment); a required member
        // who does not is refused as the policy says.
        if config.enrol, let code = enrolIfUnregistered(config, user: user, unregistered: unregistered, started: started) {
            return code
        }
        let platform = platform(config)
        var login = Login(config: config, platform: platform)
        // pam_u2f's `debug`: every step to syslog at LOG_DEBUG. The events carry no secret.
        if options.debug { login.trace = { event in debug(event.description) } }
        // Offline logins: tpm2-tss is loaded only if the TPM is needed (OfflineLogins).
        if config.offline {
            let offline = OfflineLogins(config: config, storage: platform.nonSecureStorage, lockDirectory: config.store)
            offline.service = item(PAM_SERVICE)
            login.offline = offline
        }
        var firstPass = false
        var cannotAsk = false
        let prompt = Self.prompt(config.prompt, attemptsLeft: entry?.attemptsLeft, blocked: entry?.blocked == true)
        var (outcome, identity) = login.run(unixUser: user) {
            readPIN(config, prompt: prompt, firstPass: &firstPass, cannotAsk: &cannotAsk)
        }
        // The backend's signed count of the attempts left (Login keeps it with the account).
        func attemptsLeftNow() -> Int? {
            guard outcome == .wrongPIN, let kept = try? AccountMap(storage: platform.nonSecureStorage).account(for: user)
            else { return nil }
            return kept.attemptsLeft
        }
        if outcome == .wrongPIN, firstPass, !options.useFirstPass, attemptsLeftNow() != 1 {
            // try_first_pass: the stacked password looked like a PIN and was a wrong one (one
            // wrong PIN counted). The user is asked now; an answer that is the same text is
            // that same wrong PIN and is not sent again, so it is not counted twice.
            debug("try_first_pass: PAM_AUTHTOK was a wrong PIN; asking for the PIN")
            var repeated = false
            let again = Self.prompt(config.prompt, attemptsLeft: attemptsLeftNow())
            (outcome, identity) = login.run(unixUser: user) {
                guard let answer = channel.converse(style: PAM_PROMPT_ECHO_OFF, again, conversationFailed: &cannotAsk) else {
                    return nil
                }
                if let token = channel.item(PAM_AUTHTOK), token.hasSameBytes(as: answer) {
                    repeated = true
                    return nil
                }
                return answer
            }
            if repeated {
                debug("try_first_pass: the answer is PAM_AUTHTOK again; not sent a second time")
                outcome = .wrongPIN
            }
        }
        if outcome == .pinCanceled && cannotAsk {
            // No terminal, sudo -n, a program without a conversation: a PIN cannot be typed,
            // so the login ends now, with a code the stack can tell from a wrong PIN.
            log(LOG_NOTICE, "user=\(user) identity=\(identity) outcome=CONV_ERR (the application cannot prompt for the PIN: "
                + "no conversation, or it failed, as under sudo -n)")
            return PAM_CONV_ERR
        }
        var code = pamCode(outcome, unregistered: unregistered)
        let offline = login.offline?.use == .checked
        // The backend's count of attempts left says nothing of an offline wrong PIN (the host
        // and the TPM count those).
        let left = offline ? nil : attemptsLeftNow()
        // One attempt left: this login ends here (PAM_MAXTRIES), so that no caller's retry loop
        // (sudo asks three times, the server blocks at three) spends the last one; the user
        // tries again knowingly, and that prompt says it is the last.
        if left == 1 { code = PAM_MAXTRIES }
        for note in login.offline?.notes ?? [] { log(LOG_NOTICE, "user=\(user) \(note)") }
        logOutcome(code, user: user, identity: identity, outcome: outcome, started: started,
                   mode: offline ? " mode=offline" : "", unregistered: unregistered, attemptsLeft: left)
        // The way back from a blocked or revoked identity (`enrol`): a registration code from
        // the administrator and a new PIN, in this same conversation; the old identity goes.
        if outcome == .blocked || outcome == .revoked, config.enrol,
           let enrolled = enrolIfUnregistered(config, user: user, unregistered: unregistered, started: started, replacing: outcome) {
            return enrolled
        }
        switch outcome {
        case .success where offline:
            tell(PAM_TEXT_INFO, "The M-Pin server cannot be reached: this was an offline login, the PIN checked by this host's TPM.")
        case .wrongPIN where offline: tell(PAM_ERROR_MSG, "Wrong PIN (offline login: the M-Pin server cannot be reached).")
        case .wrongPIN:
            switch left {
            case 1?: tell(PAM_ERROR_MSG, "Wrong PIN; 1 attempt left before this identity is blocked. Log in again to use it.")
            case let n?: tell(PAM_ERROR_MSG, "Wrong PIN; \(n) attempts left before this identity is blocked.")
            case nil: tell(PAM_ERROR_MSG, "Wrong PIN.")
            }
        case .blocked: tell(PAM_ERROR_MSG, "Your M-Pin identity is blocked; ask an administrator.")
        case .revoked: tell(PAM_ERROR_MSG, "Your M-Pin identity has been revoked; ask an administrator.")
        case .unavailable: tellUnavailable()
        default: break
        }
        return code
    }

    /// The one syslog line of a login: user, identity, outcome, duration and, for a failure, why.
    func logOutcome(_ code: Int32, user: String, identity: String, outcome: Login.Outcome, started: MonotonicInstant,
                    mode: String = "", unregistered: EnforcementPolicy.Unregistered, attemptsLeft: Int? = nil) {
        let ms = (MonotonicInstant.now - started).components
        let elapsed = ms.seconds * 1000 + ms.attoseconds / 1_000_000_000_000_000
        var detail = ""
        if case .unavailable(let why) = outcome { detail = " (\(why))" }
        if case .failed(let why) = outcome { detail = " (\(why))" }
        if let attemptsLeft { detail = " attempts_left=\(attemptsLeft)" + (code == PAM_MAXTRIES ? " (the login ends: the last attempt is kept)" : "") }
        if outcome == .unknownUser {
            switch unregistered {
            case .ignore: detail = " (nouserok: no registration)"
            case .unknown(let why), .refuse(let why): detail = " (\(why))"
            }
        }
        log(code == PAM_SUCCESS ? LOG_INFO : LOG_NOTICE,
            "user=\(user) identity=\(identity.isEmpty ? "-" : identity)\(mode) outcome=\(outcome.name) duration_ms=\(elapsed)\(detail)")
    }

    func pamCode(_ outcome: Login.Outcome, unregistered: EnforcementPolicy.Unregistered) -> Int32 {
        switch outcome {
        case .success: PAM_SUCCESS
        case .wrongPIN, .pinCanceled: PAM_AUTH_ERR
        case .blocked: PAM_MAXTRIES
        case .revoked: PAM_PERM_DENIED
        case .unknownUser: code(unregistered)
        case .unavailable: unavailableCode
        case .failed: PAM_AUTH_ERR
        }
    }

    /// What a backend that cannot be reached answers: `failmode` (ModuleOptions.failSecure).
    var unavailableCode: Int32 { options.failSecure ? PAM_AUTH_ERR : PAM_AUTHINFO_UNAVAIL }

    /// Says why M-Pin was not asked, and what happens next, unless the call is silent: a user
    /// who typed a PIN and is then asked for a password learns why.
    func tellUnavailable() {
        tell(PAM_TEXT_INFO, options.failSecure
             ? "The M-Pin server cannot be reached: this login is refused (failmode=secure)."
             : "The M-Pin server cannot be reached: M-Pin was not checked; the next method decides.")
    }

    /// The code for a user with no registration, as EnforcementPolicy decided.
    func code(_ unregistered: EnforcementPolicy.Unregistered) -> Int32 {
        switch unregistered {
        case .ignore: PAM_IGNORE
        case .unknown: PAM_USER_UNKNOWN
        case .refuse: PAM_AUTH_ERR
        }
    }

    /// Where `account` stands in the line's policy, its groups resolved by the name service
    /// (UnixGroups); nil when the name service failed, which is logged and is
    /// PAM_AUTHINFO_UNAVAIL, never a skip. No lookup when the policy names no group.
    func standing(_ policy: EnforcementPolicy, _ account: UnixAccount) -> EnforcementPolicy.Standing? {
        let groups = policy.groupsToResolve
        guard !groups.isEmpty else { return .ordinary }
        do {
            let standing = policy.standing(memberOf: try UnixGroups.membership(of: account, in: groups))
            debug("user=\(account.name) groups: \(standing.described)")
            return standing
        } catch {
            log(LOG_ERR, "user=\(account.name) outcome=UNAVAILABLE (\(error.description); require_group/exempt_group cannot be decided)")
            return nil
        }
    }

    /// Tells the module how long the login may take from here: the whole login's budget
    /// (`timeout`; for `mode = device` the wait for the approval too) and a margin for the
    /// store's lock and the process's own start and exit. Time in the conversation does not
    /// count; past this the module stops the helper.
    func allowTime(_ config: LoginConfig, device: Bool = false) {
        // Offline logins add the TPM's work after the network's budget (a record made at an online
        // success, or the offline check): a hardware TPM may take a second or two for it.
        let seconds = config.timeout + (device || config.mode == .device ? config.deviceTimeout : 0) + 3 + (config.offline ? 5 : 0)
        channel.watchdog(milliseconds: UInt32(min(seconds * 1000, Double(UInt32.max))))
    }

    /// The PIN from PAM_AUTHTOK (try_first_pass/use_first_pass) or from the conversation,
    /// echo off; the module wipes its copy of the answer, this process keeps it only as a
    /// SecretBytes. A PAM_AUTHTOK is the stack's password, typed for another module: it is
    /// sent as the PIN only when it is one (`pin_length` digits), else try_first_pass asks and
    /// use_first_pass sends nothing (docs/SECURITY.md §6.8). `firstPass` tells which was taken;
    /// `cannotAsk` is set when the conversation is missing or failed (pam_mpin(8), PAM RETURN CODES).
    /// The PIN prompt, which says how many attempts are left when the last login was a wrong
    /// PIN: the one text every caller shows, sudo under PAM_SILENT included.
    static func prompt(_ prompt: String, attemptsLeft: Int?, blocked: Bool = false) -> String {
        let note: String
        if blocked {
            note = "identity blocked: ask an administrator to unblock it"
        } else if let left = attemptsLeft {
            note = left == 1 ? "last attempt before the identity is blocked" : "\(left) attempts left"
        } else {
            return prompt
        }
        // "M-Pin PIN: " becomes "M-Pin PIN (2 attempts left): ".
        var base = Substring(prompt)
        while base.last == " " { base = base.dropLast() }
        if base.last == ":" { return "\(base.dropLast()) (\(note)): " }
        return "\(base) (\(note)) "
    }

    func readPIN(_ config: LoginConfig, prompt: String, firstPass: inout Bool, cannotAsk: inout Bool) -> SecretBytes? {
        lockMemoryForSecrets(self)
        if options.useFirstPass || options.tryFirstPass {
            if let token = channel.item(PAM_AUTHTOK), !token.isEmpty {
                if PINFormat.isValid(token, length: config.pinLength) {
                    firstPass = true
                    return token
                }
                debug("PAM_AUTHTOK is not a PIN (\(PINFormat.rule(length: config.pinLength))); not sent")
            } else {
                debug("no PAM_AUTHTOK")
            }
            if options.useFirstPass { return nil }
        }
        return channel.converse(style: PAM_PROMPT_ECHO_OFF, prompt, conversationFailed: &cannotAsk)
    }

    /// pam_sm_acct_mgmt: a blocked or revoked identity is PAM_PERM_DENIED; anyone else gets no
    /// opinion (PAM_IGNORE). A configuration, name service or store error is PAM_SERVICE_ERR,
    /// or PAM_IGNORE with `account_fail_open` (docs/SECURITY.md §6.12). One log line for each
    /// refusal and error.
    func accountStatus() -> Int32 {
        logHardeningFailure()
        guard let config = loadConfig() else { return accountError("configuration error (see above)") }
        allowTime(config)
        let (account, code) = unixAccount(unknownCode: PAM_IGNORE, unavailableCode: PAM_SERVICE_ERR)
        guard let account else {
            return code == PAM_SERVICE_ERR ? accountError("the user could not be resolved") : code
        }
        let user = account.name
        var entry: AccountMap.Account? = nil
        if let why = storeClosed(config, user: user, account: &entry) {
            log(LOG_NOTICE, "account user=\(user) outcome=IGNORED (\(why))")
            return PAM_IGNORE
        }
        let state: Login.AccountState
        do {
            state = try Login(config: config, platform: platform(config)).accountState(unixUser: user)
        } catch {
            return accountError("user=\(user): \(error.description)")
        }
        switch state {
        case .blocked, .revoked:
            log(LOG_NOTICE, "account user=\(user) state=\(state.rawValue.uppercased()) outcome=PERM_DENIED")
            return PAM_PERM_DENIED
        default:
            debug("account user=\(user) state=\(state.rawValue): no opinion")
            return PAM_IGNORE
        }
    }

    func accountError(_ why: String) -> Int32 {
        if options.accountFailOpen {
            log(LOG_WARNING, "account: \(why); account_fail_open: no opinion (PAM_IGNORE)")
            return PAM_IGNORE
        }
        log(LOG_ERR, "account: \(why); refused (PAM_SERVICE_ERR)")
        return PAM_SERVICE_ERR
    }
}

extension EnforcementPolicy.Standing {
    /// For log lines: which group put the user where.
    var described: String {
        switch self {
        case .required(let group): "a member of require_group \(group)"
        case .exempt(let group): "a member of exempt_group \(group)"
        case .ordinary: "a member of no require_group or exempt_group"
        }
    }
}
