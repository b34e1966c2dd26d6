/// Wrong registration codes tried for a user (docs/MFA.md §8), decided here once for both
/// backends. Like wrong PINs, the `maxAttempts`-th wrong code in a row deletes every code the
/// user still has: an invitation (`mpin-server user invite`) cannot be guessed at, only issued
/// again. The count lives in the database, on the user's live codes (`reg_codes.failures`),
/// so it survives a restart, is shared by every node, and no flood of other user ids can push
/// it out (issue 28). A user without a live code has nothing to guess and nothing is counted.
enum WrongRegCodeCounter {
    /// What to write after one more wrong code for a user whose live codes carry `failures`.
    enum Update: Sendable, Equatable {
        /// The user's live codes carry the new count.
        case count(Int)
        /// The limit is reached: every code of the user is deleted (the count goes with them).
        case voidCodes
    }

    /// One more wrong code against a user with `liveCodes` live codes and the count as read
    /// (the highest `failures` among them); nil when there is nothing to count.
    static func decide(failures: Int, liveCodes: Int, maxAttempts: Int) -> Update? {
        guard liveCodes > 0 else { return nil }
        let counted = failures + 1
        return counted >= maxAttempts ? .voidCodes : .count(counted)
    }
}
