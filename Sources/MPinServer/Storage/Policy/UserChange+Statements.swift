import Foundation

extension UserChange {
    /// The statements of a change, each with the user id as its one parameter; the same SQL
    /// on SQLite and PostgreSQL (placeholders `?`, which `PostgresStorage` numbers).
    static func statements(_ change: UserChange) -> [String] {
        switch change {
        case .activate:
            // A revoked user stays revoked: `user add` makes it pending again, on purpose.
            return ["UPDATE users SET state = 'active' WHERE user_id = ? AND state <> 'revoked'"]
        case .revoke:
            // The identities go too (docs/SECURITY.md §6.13): a revoked user made pending again by
            // `user add` must enrol afresh, not find a stolen token working again.
            return ["UPDATE users SET state = 'revoked', activation_code_hash = NULL WHERE user_id = ?",
                    "DELETE FROM registrations WHERE user_id = ?",
                    "DELETE FROM identities WHERE user_id = ?", "DELETE FROM sessions WHERE user_id = ?",
                    // A revoked user's signatures stop verifying (docs/MFA.md §14), and a DVS
                    // registration token issued before the revocation enrols nothing after it.
                    "DELETE FROM signing_keys WHERE user_id = ?", "DELETE FROM dvs_tokens WHERE user_id = ?",
                    "DELETE FROM seen_signatures WHERE user_id = ?"]
        case .unblock:
            return ["UPDATE identities SET attempts = 0, blocked_at = NULL WHERE user_id = ?",
                    "UPDATE signing_keys SET attempts = 0, blocked_at = NULL WHERE user_id = ?"]
        case .delete:
            return ["DELETE FROM identities WHERE user_id = ?", "DELETE FROM registrations WHERE user_id = ?",
                    "DELETE FROM sessions WHERE user_id = ?", "DELETE FROM signing_keys WHERE user_id = ?",
                    "DELETE FROM dvs_tokens WHERE user_id = ?", "DELETE FROM seen_signatures WHERE user_id = ?",
                    "DELETE FROM offline_logins WHERE user_id = ?", "DELETE FROM users WHERE user_id = ?"]
        }
    }
}
