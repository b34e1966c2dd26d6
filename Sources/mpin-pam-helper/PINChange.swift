import CPAMProtocol
import MPinClient
import MPinCrypto
import MPinLinux
import MPinLogin
#if canImport(Glibc)
import Glibc
#endif

/// pam_sm_chauthtok: a registered user's new PIN (`passwd` on a service whose password stack
/// runs pam_mpin). libpam calls twice: PAM_PRELIM_CHECK (may this module change the token at
/// all: a user with a token here, yes; anyone else, PAM_IGNORE so the next module changes
/// theirs), then PAM_UPDATE_AUTHTOK, which asks the current PIN, proves it to the backend with
/// an ordinary login (counted like any login), then asks the new PIN twice and re-keys the
/// token on this host (Login.changePIN).
extension PAMSession {
    /// pam_sm_chauthtok's two phases, from <security/pam_modules.h> (part of libpam's ABI;
    /// that header is the module side's, which the helper does not import).
    static let prelimCheck: Int32 = 0x4000
    static let updateAuthtok: Int32 = 0x2000

    func changePIN() -> Int32 {
        let started = MonotonicInstant.now
        logHardeningFailure()
        guard let config = loadConfig() else { return PAM_SERVICE_ERR }
        allowTime(config)
        let (account, refusal) = unixAccount(unknownCode: PAM_IGNORE, unavailableCode: PAM_TRY_AGAIN)
        guard let account else { return refusal == PAM_SERVICE_ERR ? PAM_SERVICE_ERR : PAM_IGNORE }
        let user = account.name
        guard geteuid() == 0 else { return PAM_IGNORE }
        let entry = try? AccountMap(storage: platform(config).nonSecureStorage).account(for: user)
        // Only a token on this host has a PIN here; a link (device mode) has none, and a
        // registration made for another uid is not this account's.
        guard let entry, !entry.linked, entry.uid.map({ $0 == account.uid }) ?? true else { return PAM_IGNORE }
        if flags & Self.prelimCheck != 0 { return PAM_SUCCESS }
        guard flags & Self.updateAuthtok != 0 else { return PAM_SERVICE_ERR }

        lockMemoryForSecrets(self)
        let rule = PINFormat.rule(length: config.pinLength)
        var cannotAsk = false
        var newPINProblem = ""
        let current = Self.prompt("Current M-Pin PIN: ", attemptsLeft: entry.attemptsLeft, blocked: entry.blocked)
        let (outcome, identity) = Login(config: config, platform: platform(config)).changePIN(
            unixUser: user,
            askOldPIN: { channel.converse(style: PAM_PROMPT_ECHO_OFF, current, conversationFailed: &cannotAsk) },
            askNewPIN: {
                // The new PIN's time is the user's; the backend's budget was spent already.
                allowTime(config)
                guard let pin = channel.converse(style: PAM_PROMPT_ECHO_OFF, "New M-Pin PIN (\(rule)): ") else { return nil }
                guard PINFormat.isValid(pin, length: config.pinLength) else { newPINProblem = "The PIN must be \(rule)."; return nil }
                guard let again = channel.converse(style: PAM_PROMPT_ECHO_OFF, "Repeat the new PIN: "),
                      pin.hasSameBytes(as: again) else { newPINProblem = "The PINs do not match."; return nil }
                return pin
            })
        let ms = (MonotonicInstant.now - started).components
        let elapsed = ms.seconds * 1000 + ms.attoseconds / 1_000_000_000_000_000
        var code: Int32
        var detail = ""
        switch outcome {
        case .changed:
            code = PAM_SUCCESS
            tell(PAM_TEXT_INFO, "M-Pin PIN changed.")
        case .newPINRefused:
            code = PAM_AUTHTOK_ERR
            tell(PAM_ERROR_MSG, newPINProblem.isEmpty ? "No new PIN: nothing changed." : newPINProblem + " Nothing changed.")
        case .failed(let why):
            code = PAM_AUTHTOK_ERR
            detail = " (\(why))"
            tell(PAM_ERROR_MSG, "The PIN could not be changed; the current PIN still works.")
        case .notVerified(let login):
            detail = " (the current PIN: \(login.name))"
            switch login {
            case .wrongPIN:
                code = PAM_AUTHTOK_RECOVERY_ERR
                let left = (try? AccountMap(storage: platform(config).nonSecureStorage).account(for: user))?.attemptsLeft
                tell(PAM_ERROR_MSG, left.map { "Wrong PIN; \($0) attempt\($0 == 1 ? "" : "s") left before this identity is blocked." }
                     ?? "Wrong PIN.")
            case .blocked, .revoked:
                code = PAM_PERM_DENIED
                tell(PAM_ERROR_MSG, "Your M-Pin identity is \(login == .blocked ? "blocked" : "revoked"); ask an administrator.")
            case .unavailable:
                code = PAM_TRY_AGAIN
                tell(PAM_ERROR_MSG, "The M-Pin server cannot be reached: the current PIN cannot be checked, so the PIN stays as it is.")
            case .pinCanceled where cannotAsk: code = PAM_CONV_ERR
            default: code = PAM_AUTHTOK_ERR
            }
        }
        log(code == PAM_SUCCESS ? LOG_NOTICE : LOG_WARNING,
            "user=\(user) identity=\(identity.isEmpty ? "-" : identity) pin_change=\(code == PAM_SUCCESS ? "OK" : "REFUSED") "
            + "duration_ms=\(elapsed)\(detail)")
        return code
    }
}
