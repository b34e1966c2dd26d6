import MPinClient
import MPinCrypto

/// A user's new PIN (pam_sm_chauthtok, `passwd` through pam_mpin): the old PIN is proven to
/// the backend by an ordinary login, then the token is re-keyed on this host
/// (MPinSDK.changePIN). Nothing new is registered and the identity stays the same; the old
/// PIN opens the re-keyed token no more.
extension Login {
    public enum PINChangeOutcome: Equatable, Sendable {
        case changed
        /// The login with the old PIN did not succeed: its outcome (wrong PIN, blocked,
        /// unavailable, …); nothing was changed.
        case notVerified(Outcome)
        /// No new PIN was given, or it was refused (format, the two did not match).
        case newPINRefused
        /// The login succeeded, but the token could not be re-keyed or written: the old PIN
        /// still works.
        case failed(String)
    }

    /// Logs `unixUser` in with the PIN `askOldPIN` gives, then, after a success, asks
    /// `askNewPIN` and re-keys the token for it. Both PINs are wiped before returning.
    public func changePIN(unixUser: String, askOldPIN: () -> SecretBytes?,
                          askNewPIN: () -> SecretBytes?) -> (outcome: PINChangeOutcome, identity: String) {
        var oldPIN: SecretBytes? = nil
        let (outcome, identity) = run(unixUser: unixUser) {
            guard let pin = askOldPIN() else { return nil }
            var bytes = pin.withUnsafeBytes { [UInt8]($0) }
            oldPIN = SecretBytes(taking: &bytes)
            return pin
        }
        guard outcome == .success, let verified = oldPIN.take() else { return (.notVerified(outcome), identity) }
        guard let newPIN = askNewPIN(), !newPIN.isEmpty else { return (.newPINRefused, identity) }
        let sdk = MPinSDK(context: platform)
        let initStatus = sdk.initialize()
        guard initStatus.isOK else { return (.failed(initStatus.description), identity) }
        guard let account = try? AccountMap(storage: platform.nonSecureStorage).account(for: unixUser),
              let user = sdk.listUsers(backend: account.backend).1.first(where: { $0.id == account.identity }) else {
            return (.failed("the registration is gone from the store"), identity)
        }
        let status = sdk.changePIN(user, verifiedOldPIN: verified, newPIN: newPIN)
        return status.isOK ? (.changed, identity) : (.failed(status.description), identity)
    }
}
