import Foundation
import GRDB

extension SQLiteStorage {
    func listUsers(maxAttempts: Int) async throws -> [UserSummary] {
        try readNow { db in
            let rows = try Row.fetchAll(db, sql: """
                SELECT u.user_id, u.state,
                  (SELECT COUNT(*) FROM identities i WHERE i.user_id = u.user_id) AS identities,
                  (SELECT COUNT(*) FROM registrations r WHERE r.user_id = u.user_id) AS pending,
                  (SELECT COALESCE(MAX(attempts), 0) FROM identities i WHERE i.user_id = u.user_id) AS attempts
                FROM users u ORDER BY u.user_id
                """)
            return rows.map { r in
                let attempts: Int = r["attempts"]
                return UserSummary(userId: r["user_id"], state: r["state"], identities: r["identities"],
                                   pendingRegistrations: r["pending"], failedAttempts: attempts,
                                   blocked: attempts >= maxAttempts)
            }
        }
    }

    func addUser(userID: String, activationCodeHash hash: String, now: Date) async throws {
        try writeNow { db in
            let state = try String.fetchOne(db, sql: "SELECT state FROM users WHERE user_id = ?", arguments: [userID])
            if state == nil {
                try db.execute(sql: "INSERT INTO users (user_id, state, activation_code_hash, created) VALUES (?, 'pending', ?, ?)",
                               arguments: [userID, hash, now.timeIntervalSince1970])
            } else {
                try db.execute(sql: """
                    UPDATE users SET activation_code_hash = ?,
                    state = CASE WHEN state = 'revoked' THEN 'pending' ELSE state END WHERE user_id = ?
                    """, arguments: [hash, userID])
            }
        }
    }

    func changeUser(userID: String, _ change: UserChange) async throws -> Bool {
        try writeNow { db in
            guard try String.fetchOne(db, sql: "SELECT state FROM users WHERE user_id = ?", arguments: [userID]) != nil
            else { return false }
            for s in UserChange.statements(change) { try db.execute(sql: s, arguments: [userID]) }
            return true
        }
    }

    func pendingRegistrations(userID: String, now: Date) async throws -> [PendingRegistration] {
        try readNow { db in
            try Row.fetchAll(db, sql: """
                SELECT mpin_id, created, expires, device_name, source, active FROM registrations
                WHERE user_id = ? AND expires > ? ORDER BY created, mpin_id
                """, arguments: [userID, now.timeIntervalSince1970]).map { r in
                PendingRegistration(mpinID: r["mpin_id"], created: r["created"], expires: r["expires"],
                                    deviceName: r["device_name"], source: r["source"], active: r["active"])
            }
        }
    }

    func activateRegistration(userID: String, mpinID: String, now: Date) async throws -> Bool {
        try writeNow { db in
            let state = try String.fetchOne(db, sql: "SELECT state FROM users WHERE user_id = ?", arguments: [userID])
            guard let state, state != "revoked" else { return false }
            try db.execute(sql: "UPDATE registrations SET active = 1 WHERE mpin_id = ? AND user_id = ? AND expires > ?",
                           arguments: [mpinID, userID, now.timeIntervalSince1970])
            guard db.changesCount == 1 else { return false }
            try db.execute(sql: "UPDATE users SET state = 'active' WHERE user_id = ?", arguments: [userID])
            return true
        }
    }

    func identities(userID: String) async throws -> [IssuedIdentity] {
        try readNow { db in
            try Row.fetchAll(db, sql: "SELECT mpin_id, created, attempts FROM identities WHERE user_id = ? ORDER BY created, mpin_id",
                             arguments: [userID]).map { r in
                IssuedIdentity(mpinID: r["mpin_id"], created: r["created"], failedAttempts: r["attempts"], maxAttempts: Int.max)
            }
        }
    }

    func unblockIdentity(userID: String, mpinID: String) async throws -> Bool {
        try writeNow { db in
            try db.execute(sql: "UPDATE identities SET attempts = 0, blocked_at = NULL WHERE mpin_id = ? AND user_id = ?",
                           arguments: [mpinID, userID])
            guard db.changesCount == 1 else { return false }
            try db.execute(sql: "UPDATE signing_keys SET attempts = 0, blocked_at = NULL WHERE user_id = ?", arguments: [userID])
            return true
        }
    }

    func addApp(clientID: String, name: String, redirectURI: String, logoURL: String, secretHash: String,
                idTokenAlg: String, now: Date) async throws {
        try writeNow { db in
            try db.execute(sql: """
                INSERT INTO apps (client_id, name, redirect_uri, logo_url, secret_hash, id_token_alg, created)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """, arguments: [clientID, name, redirectURI, logoURL, secretHash, idTokenAlg, now.timeIntervalSince1970])
        }
    }

    func listApps() async throws -> [AppSummary] {
        try readNow { db in
            try Row.fetchAll(db, sql: "SELECT * FROM apps ORDER BY created, client_id").map { r in
                AppSummary(clientId: r["client_id"], name: r["name"], redirectURI: r["redirect_uri"],
                           logoURL: r["logo_url"], created: r["created"], idTokenAlg: r["id_token_alg"])
            }
        }
    }

    func deleteApp(clientID: String) async throws -> Bool {
        try writeNow { db in
            try db.execute(sql: "DELETE FROM apps WHERE client_id = ?", arguments: [clientID])
            guard db.changesCount > 0 else { return false }
            // Its live sessions and unused codes die with it (docs/MFA.md §2).
            try db.execute(sql: "DELETE FROM mfa_sessions WHERE client_id = ?", arguments: [clientID])
            try db.execute(sql: "DELETE FROM authz_codes WHERE client_id = ?", arguments: [clientID])
            return true
        }
    }
}

extension UserChange {
    /// The statements of a change, each with the user id as its one parameter; the same SQL
    /// on SQLite and PostgreSQL (placeholders `?`, which `PostgresStorage` numbers).
    static func statements(_ change: UserChange) -> [String] {
        switch change {
        case .activate:
            // A revoked user stays revoked: `user add` makes it pending again, on purpose.
            return ["UPDATE users SET state = 'active' WHERE user_id = ? AND state <> 'revoked'"]
        case .revoke:
            // The identities go too (review of issue 24): a revoked user made pending again by
            // `user add` must enrol afresh, not find a stolen token working again.
            return ["UPDATE users SET state = 'revoked', activation_code_hash = NULL WHERE user_id = ?",
                    "DELETE FROM registrations WHERE user_id = ?",
                    "DELETE FROM identities WHERE user_id = ?", "DELETE FROM sessions WHERE user_id = ?",
                    // A revoked user's signatures stop verifying (docs/MFA.md §14), and a DVS
                    // registration token issued before the revocation enrols nothing after it.
                    "DELETE FROM signing_keys WHERE user_id = ?", "DELETE FROM dvs_tokens WHERE user_id = ?"]
        case .unblock:
            return ["UPDATE identities SET attempts = 0, blocked_at = NULL WHERE user_id = ?",
                    "UPDATE signing_keys SET attempts = 0, blocked_at = NULL WHERE user_id = ?"]
        case .delete:
            return ["DELETE FROM identities WHERE user_id = ?", "DELETE FROM registrations WHERE user_id = ?",
                    "DELETE FROM sessions WHERE user_id = ?", "DELETE FROM signing_keys WHERE user_id = ?",
                    "DELETE FROM dvs_tokens WHERE user_id = ?", "DELETE FROM users WHERE user_id = ?"]
        }
    }
}
