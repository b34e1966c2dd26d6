import Foundation

extension UserSummary {
    /// `user list`'s query, the same SQL on both backends: each user with its identity and
    /// registration counts, its highest wrong-PIN count and its latest recorded block.
    static let listQuery = """
        SELECT u.user_id, u.state,
          (SELECT COUNT(*) FROM identities i WHERE i.user_id = u.user_id) AS identities,
          (SELECT COUNT(*) FROM registrations r WHERE r.user_id = u.user_id) AS pending,
          (SELECT COALESCE(MAX(attempts), 0) FROM identities i WHERE i.user_id = u.user_id) AS attempts,
          (SELECT MAX(blocked_at) FROM identities i WHERE i.user_id = u.user_id) AS blocked_at
        FROM users u ORDER BY u.user_id
        """

    /// A user as read by `listQuery`; blocked as `WrongPINCounter` means it.
    init(userId: String, state: String, identities: Int, pendingRegistrations: Int, failedAttempts: Int,
         blockedAt: Double?, maxAttempts: Int) {
        self.init(userId: userId, state: state, identities: identities, pendingRegistrations: pendingRegistrations,
                  failedAttempts: failedAttempts,
                  blocked: WrongPINCounter.isBlocked(attempts: failedAttempts, blockedAt: blockedAt, maxAttempts: maxAttempts))
    }
}
