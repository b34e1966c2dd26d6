import CPAMProtocol
import MPinClient
import MPinCrypto
import MPinLinux
import MPinLogin
#if canImport(Glibc)
import Glibc
#endif

/// `enrol = yes`: a Unix user with no registration enrols in this same conversation (the
/// registration code from `mpin-server user invite`, a new PIN twice) and is then logged in
/// with that PIN (MPinLogin's Enrolment does the work; this maps it to PAM).
private extension Result {
    var success: Success? { if case .success(let value) = self { value } else { nil } }
}

extension PAMSession {
    /// The PAM code of an enrolment, or nil when `user` has a registration already (or the
    /// store cannot say: the login reports that), so the usual login runs.
    func enrolIfUnregistered(_ config: LoginConfig, user: String, unregistered: EnforcementPolicy.Unregistered,
                             started: MonotonicInstant, replacing: Login.Outcome? = nil) -> Int32? {
        let platform = platform(config)
        // An unreadable store is the login's to report.
        guard let existing = Result(catching: { () throws(StorageError) in
            try AccountMap(storage: platform.nonSecureStorage).account(for: user)
        }).success else { return nil }
        if let account = existing {
            guard replacing != nil, Enrolment.mayReplace(account) else { return nil }
        } else if replacing != nil {
            return nil
        }
        let enrolment = Enrolment(config: config, platform: platform)
        if let refusal = enrolment.refusal {
            log(LOG_ERR, "user=\(user) outcome=ENROL_REFUSED (\(refusal))")
            return replacing == nil ? code(unregistered) : nil
        }
        if let replacing {
            // The login just said why (blocked, revoked); the same conversation offers the way back.
            tell(PAM_TEXT_INFO, "Your M-Pin identity is \(replacing == .blocked ? "blocked" : "revoked"). With a registration code "
                 + "from your administrator you can enrol again and choose a new PIN; press Enter without one to stop.")
        } else {
            tell(PAM_TEXT_INFO, "No M-Pin identity for \(user) yet: enrol with the registration code your administrator gave you.")
        }
        lockMemoryForSecrets(self)
        let rule = PINFormat.rule(length: config.pinLength)
        let (outcome, identity, loginOutcome) = enrolment.run(
            unixUser: user,
            askCode: { channel.converse(style: PAM_PROMPT_ECHO_OFF, "M-Pin registration code: ") },
            askNewPIN: {
                guard let pin = channel.converse(style: PAM_PROMPT_ECHO_OFF, "New M-Pin PIN (\(rule)): ") else { return .canceled }
                guard PINFormat.isValid(pin, length: config.pinLength) else { return .badFormat }
                guard let again = channel.converse(style: PAM_PROMPT_ECHO_OFF, "Repeat the new PIN: "),
                      pin.hasSameBytes(as: again) else { return .canceled }
                return .pin(pin)
            },
            login: { (pin: borrowing SecretBytes) -> Login.Outcome in
                // The login after the registration gets the time of a login of its own.
                allowTime(config)
                var bytes = pin.withUnsafeBytes { [UInt8]($0) }
                var copyHolder: SecretBytes? = SecretBytes(taking: &bytes)
                return Login(config: config, platform: platform).run(unixUser: user) { copyHolder.take() }.outcome
            })
        var detail = ""
        switch outcome {
        case .notAllowed(let why), .unavailable(let why), .failed(let why): detail = " (\(why))"
        default: break
        }
        let ms = (MonotonicInstant.now - started).components
        let elapsed = ms.seconds * 1000 + ms.attoseconds / 1_000_000_000_000_000
        log(outcome == .registered ? LOG_NOTICE : LOG_WARNING,
            "user=\(user) identity=\(identity) enrolment=\(outcome.name) duration_ms=\(elapsed)\(detail)")
        switch outcome {
        case .registered:
            guard let loginOutcome else { return PAM_AUTH_ERR }
            let result = pamCode(loginOutcome, unregistered: unregistered)
            logOutcome(result, user: user, identity: identity, outcome: loginOutcome, started: started, mode: " enrolled",
                       unregistered: unregistered)
            return result
        case .codeRefused:
            tell(PAM_ERROR_MSG, "The registration code was refused.")
            return PAM_AUTH_ERR
        case .canceled where replacing != nil:
            return nil
        case .canceled, .pinFormat:
            tell(PAM_ERROR_MSG, outcome == .pinFormat ? "The PIN must be \(rule)." : "Enrolment canceled.")
            return PAM_AUTH_ERR
        case .notAllowed: return replacing == nil ? code(unregistered) : nil
        case .unavailable:
            tellUnavailable()
            return unavailableCode
        case .failed: return PAM_AUTH_ERR
        }
    }
}
