import Synchronization

/// Wrong registration codes tried per user id (docs/MFA.md §8): like wrong PINs, the
/// `maxInvalidLoginAttempts`-th wrong code for a user deletes every code the user still has, so
/// an invitation (`mpin-server user invite`) cannot be guessed at, only issued again. Counted
/// in this process's memory: a restart or another node starts from zero, which at 10^12
/// values per code gives a guesser nothing. The table is bounded; when full it starts afresh.
final class RegCodeFailures: Sendable {
    private let counts = Mutex([String: Int]())
    private let capacity: Int

    init(capacity: Int = 10_000) { self.capacity = capacity }

    /// Counts one wrong code for `userID`; true when that makes `limit` and the user's codes
    /// are to be dropped (the count then starts again).
    func wrongCode(userID: String, limit: Int) -> Bool {
        counts.withLock { c in
            if c[userID] == nil, c.count >= capacity { c.removeAll(keepingCapacity: true) }
            let n = (c[userID] ?? 0) + 1
            if n >= limit {
                c[userID] = nil
                return true
            }
            c[userID] = n
            return false
        }
    }

    /// A registration with a right code: the user's count is cleared.
    func rightCode(userID: String) {
        _ = counts.withLock { $0.removeValue(forKey: userID) }
    }
}
