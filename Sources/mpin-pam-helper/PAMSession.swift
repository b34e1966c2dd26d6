import CPAMProtocol
import MPinClient
import MPinCrypto
import MPinLinux
import MPinLogin
#if canImport(Glibc)
import Glibc
#endif

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

    func tell(_ style: Int32, _ message: String) {
        _ = channel.converse(style: style, message)
    }

    func loadConfig() -> LoginConfig? {
        for arg in options.unknown { log(LOG_WARNING, "ignoring unknown option \"\(arg)\"") }
        do {
            // No backend is required here: a login uses the backend its registration records;
            // `backend` is the default for new registrations (mpinctl register).
            return try options.loadConfig()
        } catch {
            log(LOG_ERR, "configuration error: \(error.description)")
            return nil
        }
    }

    func unixUser() -> String? {
        guard let name = channel.item(PAM_USER) else { return nil }
        return name.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
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
        guard let config = loadConfig() else { return PAM_SERVICE_ERR }
        allowTime(config)
        guard let user = unixUser() else {
            log(LOG_ERR, "could not get the user name")
            return PAM_SERVICE_ERR
        }
        debug("authenticating \(user)")
        if config.mode == .device { return approveOnDevice(config: config, user: user, started: started) }
        var login = Login(config: config, platform: platform(config))
        // pam_u2f's `debug`: every step to syslog at LOG_DEBUG. The events carry no secret.
        if options.debug { login.trace = { event in debug(event.description) } }
        let (outcome, identity) = login.run(unixUser: user) { readPIN(prompt: config.prompt) }
        let code = pamCode(outcome)
        logOutcome(code, user: user, identity: identity, outcome: outcome, started: started)
        switch outcome {
        case .wrongPIN: tell(PAM_ERROR_MSG, "Wrong PIN.")
        case .blocked: tell(PAM_ERROR_MSG, "Your M-Pin identity is blocked; ask an administrator.")
        case .revoked: tell(PAM_ERROR_MSG, "Your M-Pin identity has been revoked; ask an administrator.")
        case .unavailable: tell(PAM_TEXT_INFO, "The M-Pin server cannot be reached.")
        default: break
        }
        return code
    }

    /// The one syslog line of a login: user, identity, outcome, duration and, for a failure, why.
    func logOutcome(_ code: Int32, user: String, identity: String, outcome: Login.Outcome, started: MonotonicInstant,
                    mode: String = "") {
        let ms = (MonotonicInstant.now - started).components
        let elapsed = ms.seconds * 1000 + ms.attoseconds / 1_000_000_000_000_000
        var detail = ""
        if case .unavailable(let why) = outcome { detail = " (\(why))" }
        if case .failed(let why) = outcome { detail = " (\(why))" }
        log(code == PAM_SUCCESS ? LOG_INFO : LOG_NOTICE,
            "user=\(user) identity=\(identity.isEmpty ? "-" : identity)\(mode) outcome=\(outcome.name) duration_ms=\(elapsed)\(detail)")
    }

    func pamCode(_ outcome: Login.Outcome) -> Int32 {
        switch outcome {
        case .success: PAM_SUCCESS
        case .wrongPIN, .pinCanceled: PAM_AUTH_ERR
        case .blocked: PAM_MAXTRIES
        case .revoked: PAM_PERM_DENIED
        case .unknownUser: options.nouserok ? PAM_IGNORE : PAM_USER_UNKNOWN
        case .unavailable: PAM_AUTHINFO_UNAVAIL
        case .failed: PAM_AUTH_ERR
        }
    }

    /// Tells the module how long the login may take from here: the whole login's budget
    /// (`timeout`; for `mode = device` the wait for the approval too) and a margin for the
    /// store's lock and the process's own start and exit. Time in the conversation does not
    /// count; past this the module stops the helper.
    func allowTime(_ config: LoginConfig) {
        let seconds = config.timeout + (config.mode == .device ? config.deviceTimeout : 0) + 3
        channel.watchdog(milliseconds: UInt32(min(seconds * 1000, Double(UInt32.max))))
    }

    /// The PIN from PAM_AUTHTOK (try_first_pass/use_first_pass) or from the conversation,
    /// echo off; the module wipes its copy of the answer, this process keeps it only as a
    /// SecretBytes.
    func readPIN(prompt: String) -> SecretBytes? {
        if options.useFirstPass || options.tryFirstPass {
            if let token = channel.item(PAM_AUTHTOK), !token.isEmpty { return token }
            if options.useFirstPass { debug("use_first_pass: no PAM_AUTHTOK"); return nil }
        }
        return channel.converse(style: PAM_PROMPT_ECHO_OFF, prompt)
    }

    func accountStatus() -> Int32 {
        guard let config = loadConfig() else { return PAM_IGNORE }
        allowTime(config)
        guard let user = unixUser() else { return PAM_IGNORE }
        return Login(config: config, platform: platform(config)).isBlocked(unixUser: user) ? PAM_PERM_DENIED : PAM_IGNORE
    }
}
