import Foundation

/// The wrong-PIN counter of identities (the final step) and of signing keys (DVS verification),
/// decided here once for both backends: each reads the counter in its transaction, asks
/// `decide`, and writes the `Update` it returns, if any, in the same transaction.
enum WrongPINCounter {
    /// The one meaning of "blocked", for identities and signing keys alike: the counter has
    /// reached the limit, or a block was recorded (`blocked_at`, kept when the limit is raised
    /// later). Only the administrator's unblock lifts it, clearing both.
    static func isBlocked(attempts: Int, blockedAt: Double?, maxAttempts: Int) -> Bool {
        blockedAt != nil || attempts >= maxAttempts
    }

    /// What one verification comes to.
    enum Outcome: Sendable, Equatable {
        /// The right PIN (or a valid signature): the counter starts again from zero.
        case accepted
        /// A wrong one, counted, below the limit.
        case wrong
        /// A wrong one that reached the limit: this attempt blocked the identity or key.
        case blockedNow
        /// Already blocked: nothing is counted, nothing is accepted.
        case blocked
    }

    /// The counter's new state, written where it was read.
    struct Update: Sendable, Equatable {
        var attempts: Int
        /// When the block happened (seconds since 1970), nil when not blocked.
        var blockedAt: Double?
    }

    /// The outcome of a verification (`success`) against the counter as read, and the update
    /// to write (nil: the counter stays as it is, so a right PIN on a clean counter writes nothing).
    static func decide(attempts: Int, blockedAt: Double?, success: Bool, maxAttempts: Int,
                       now: Date) -> (outcome: Outcome, update: Update?) {
        if isBlocked(attempts: attempts, blockedAt: blockedAt, maxAttempts: maxAttempts) { return (.blocked, nil) }
        if success { return (.accepted, attempts == 0 ? nil : Update(attempts: 0, blockedAt: nil)) }
        let counted = attempts + 1
        let blocks = counted >= maxAttempts
        return (blocks ? .blockedNow : .wrong, Update(attempts: counted, blockedAt: blocks ? now.timeIntervalSince1970 : nil))
    }
}
