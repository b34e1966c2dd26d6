/// Wrong registration codes tried for a user (docs/MFA.md §8), decided here once for both
/// backends. The count lives in the database, on the user's live codes (`reg_codes.failures`),
/// so it survives a restart and is shared by every node (docs/MFA.md §8); the admin and the log see
/// it.
///
/// It voids nothing (docs/SECURITY.md §5): a wrong code is no evidence about any particular code, and
/// voiding a user's codes after a few wrong ones let anyone who could name the user cancel an
/// invitation without holding it. Guessing is bounded instead by the server's limits on wrong
/// codes per source and overall (`RegCodeGuessLimit`): 10^12 values against a handful of live
/// codes per user at a bounded rate. A user without a live code has nothing counted.
enum WrongRegCodeCounter {
    /// The count to write on the user's live codes after one more wrong code, when the count
    /// as read (the highest `failures` among them) is `failures`; nil when there is nothing to count.
    static func counted(failures: Int, liveCodes: Int) -> Int? {
        liveCodes > 0 ? failures + 1 : nil
    }
}
