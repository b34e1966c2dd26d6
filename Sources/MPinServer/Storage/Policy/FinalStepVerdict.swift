import Foundation

/// An issued identity as the final step reads it: its user, its counter and its user's state.
struct IdentityCounter: Sendable, Equatable {
    var userID: String
    var attempts: Int
    var blockedAt: Double?
    /// The user's state (`pending`, `active`, `revoked`); nil when the user is gone.
    var userState: String?
}

/// The verdict of the final step on a pass-2 result, decided here once for both backends.
enum FinalStepVerdict {
    /// 200 (right PIN), 401 (wrong PIN, or no such identity) or 410 (blocked, or an identity of
    /// a revoked or deleted user), whether this attempt blocked the identity, and the counter
    /// update to write in the same transaction.
    static func decide(identity: IdentityCounter?, success: Bool, maxAttempts: Int,
                       now: Date) -> (status: Int, blockedNow: Bool, update: WrongPINCounter.Update?) {
        guard let identity else { return (401, false, nil) }
        if !UserStatePolicy.mayAct(identity.userState) { return (410, false, nil) }
        let (outcome, update) = WrongPINCounter.decide(attempts: identity.attempts, blockedAt: identity.blockedAt,
                                                       success: success, maxAttempts: maxAttempts, now: now)
        switch outcome {
        case .accepted: return (200, false, update)
        case .wrong: return (401, false, update)
        case .blockedNow: return (410, true, update)
        case .blocked: return (410, false, update)
        }
    }

    /// What a counted signature verification (DVS) comes to; nil `counter`: no such key.
    static func signature(counter: (attempts: Int, blockedAt: Double?)?, valid: Bool, maxAttempts: Int,
                          now: Date) -> (verdict: SignatureVerdict, update: WrongPINCounter.Update?) {
        guard let counter else { return (.unknownKey, nil) }
        let (outcome, update) = WrongPINCounter.decide(attempts: counter.attempts, blockedAt: counter.blockedAt,
                                                       success: valid, maxAttempts: maxAttempts, now: now)
        switch outcome {
        case .accepted: return (.valid, update)
        case .wrong: return (.invalid, update)
        case .blockedNow, .blocked: return (.blocked, update)
        }
    }
}
