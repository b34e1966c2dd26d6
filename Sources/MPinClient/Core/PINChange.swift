import MPinCrypto
import MPinJSON
import MPinWire

/// A new PIN for a registered user, on this device alone.
extension MPinSDK {
    /// Re-keys the user's token for `newPIN`. The token is the client secret with f(PIN)·A
    /// folded out (TOKEN = CS − f(pin)·A, docs/CRYPTO.md §5), so folding the old PIN back in and
    /// the new one out gives exactly the token a registration with the new PIN would have
    /// stored: the backend sees no difference, nothing is sent, and the old PIN opens the new
    /// token no more (a proof with it is a wrong PIN, counted by the backend).
    ///
    /// The token cannot tell a right old PIN from a wrong one, so `verifiedOldPIN` must be one
    /// the backend has just accepted (a login that succeeded with it): with any other the new
    /// token opens with no PIN at all, and the user must register again.
    public func changePIN(_ user: MPinUser, verifiedOldPIN oldPIN: borrowing SecretBytes,
                          newPIN: borrowing SecretBytes) -> MPinStatus {
        // No backend is involved: the user need only be this core's, and registered.
        guard initialized, users.contains(where: { $0 === user }) else { return MPinStatus(.flowError, "the user is not in the list") }
        guard user.state == .registered else { return MPinStatus(.flowError, "not allowed for a user in state \(user.state.rawValue)") }
        guard let mpinId = user.mpinId else { return MPinStatus(.flowError, "the user is not registered") }
        guard !oldPIN.isEmpty, !newPIN.isEmpty else { return MPinStatus(.pinInputCanceled) }
        let tokenHex: String
        do {
            let token = try storedToken(user)
            var secret = try token.withTemporaryArray { (t) throws(MPinCryptoError) in
                try MPin.restorePIN(mpinID: mpinId, pin: MPin.sdkPINValue(oldPIN), token: t)
            }
            let clientSecret = SecretBytes(taking: &secret)
            let rekeyed = try MPin.extractPIN(mpinID: mpinId, pin: newPIN, clientSecret: clientSecret)
            tokenHex = rekeyed.withUnsafeBytes { Hex.encode($0) }
        } catch let status as MPinStatus {
            return status
        } catch {
            return MPinStatus(.cryptoError, "the stored token is invalid: \(error)")
        }
        return saveUsers(secretFor: user.mpinIdHex, secret: .object([("token", .string(tokenHex))]))
    }
}
