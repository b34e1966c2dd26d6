import CPAMShim
import MPinClient
import MPinCrypto
import MPinLinux
import MPinLogin
#if canImport(Glibc)
import Glibc
#endif

// pam_mpin.so: the PAM entry points. The module lives inside sshd and sudo, so it never
// traps, prints nothing to stdout/stderr, starts no threads, and speaks only through the
// PAM conversation and syslog. The work is in MPinLogin; this file maps it to PAM.

@_cdecl("pam_sm_authenticate")
public func pam_sm_authenticate(_ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32,
                                _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard let pamh else { return PAM_SERVICE_ERR }
    return PAMSession(handle: pamh, arguments: arguments(argc, argv)).authenticate()
}

@_cdecl("pam_sm_setcred")
public func pam_sm_setcred(_ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32,
                           _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    PAM_SUCCESS
}

/// Account management refuses identities the store marks BLOCKED; for anyone else it has no
/// opinion (PAM_IGNORE), so it can be stacked after pam_unix.
@_cdecl("pam_sm_acct_mgmt")
public func pam_sm_acct_mgmt(_ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32,
                             _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard let pamh else { return PAM_SERVICE_ERR }
    return PAMSession(handle: pamh, arguments: arguments(argc, argv)).accountStatus()
}

func arguments(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> [String] {
    guard let argv, argc > 0 else { return [] }
    return (0..<Int(argc)).compactMap { argv[$0].map { String(cString: $0) } }
}

/// One call into the module.
struct PAMSession {
    let handle: OpaquePointer
    let options: ModuleOptions

    init(handle: OpaquePointer, arguments: [String]) {
        self.handle = handle
        self.options = ModuleOptions(arguments: arguments)
    }

    /// One syslog line. Control characters (a PAM_USER from a remote client may contain line
    /// breaks) become `?`, so no value can forge or split a log line.
    func log(_ priority: Int32, _ line: String) {
        var clean = String.UnicodeScalarView()
        for scalar in line.unicodeScalars.prefix(2048) {
            clean.append(scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) ? "?" : scalar)
        }
        mpin_pam_log(handle, priority, String(clean))
    }
    func debug(_ line: String) { if options.debug { log(LOG_DEBUG, line) } }

    func tell(_ style: Int32, _ message: String) {
        _ = mpin_pam_converse(handle, style, message, nil)
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
        var status: Int32 = 0
        guard let name = mpin_pam_user(handle, &status) else { return nil }
        return String(cString: name)
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

    /// The PIN from PAM_AUTHTOK (try_first_pass/use_first_pass) or from the conversation,
    /// echo off, copied straight into a SecretBytes. The conversation's C buffer is wiped and
    /// freed here; PAM_AUTHTOK belongs to libpam.
    func readPIN(prompt: String) -> SecretBytes? {
        if options.useFirstPass || options.tryFirstPass {
            if let token = mpin_pam_authtok(handle), token.pointee != 0 {
                return SecretBytes(copying: UnsafeRawBufferPointer(start: token, count: strlen(token)))
            }
            if options.useFirstPass { debug("use_first_pass: no PAM_AUTHTOK"); return nil }
        }
        var response: UnsafeMutablePointer<CChar>? = nil
        guard mpin_pam_converse(handle, PAM_PROMPT_ECHO_OFF, prompt, &response) == PAM_SUCCESS, let response else {
            return nil
        }
        defer { mpin_pam_wipe_free(response) }
        return SecretBytes(copying: UnsafeRawBufferPointer(start: response, count: strlen(response)))
    }

    func accountStatus() -> Int32 {
        guard let config = loadConfig(), let user = unixUser() else { return PAM_IGNORE }
        return Login(config: config, platform: platform(config)).isBlocked(unixUser: user) ? PAM_PERM_DENIED : PAM_IGNORE
    }
}
