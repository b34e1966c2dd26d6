package import Foundation
import GRDB

extension SQLiteStorage {
    package func listUsers(maxAttempts: Int) async throws -> [UserSummary] {
        try await read { db in
            try Row.fetchAll(db, sql: UserSummary.listQuery).map { r in
                UserSummary(userId: r["user_id"], state: r["state"], identities: r["identities"], pendingRegistrations: r["pending"],
                            failedAttempts: r["attempts"], blockedAt: r["blocked_at"], maxAttempts: maxAttempts)
            }
        }
    }

    package func addUser(userID: String, activationCodeHash hash: String, now: Date) async throws {
        try await write { db in
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

    package func changeUser(userID: String, _ change: UserChange) async throws -> Bool {
        try await write { db in
            guard try String.fetchOne(db, sql: "SELECT state FROM users WHERE user_id = ?", arguments: [userID]) != nil
            else { return false }
            for s in UserChange.statements(change) { try db.execute(sql: s, arguments: [userID]) }
            return true
        }
    }

    package func pendingRegistrations(userID: String, now: Date) async throws -> [PendingRegistration] {
        try await read { db in
            try Row.fetchAll(db, sql: """
                SELECT mpin_id, created, expires, device_name, source, active FROM registrations
                WHERE user_id = ? AND expires > ? ORDER BY created, mpin_id
                """, arguments: [userID, now.timeIntervalSince1970]).map { r in
                PendingRegistration(mpinID: r["mpin_id"], created: r["created"], expires: r["expires"],
                                    deviceName: r["device_name"], source: r["source"], active: r["active"])
            }
        }
    }

    package func activateRegistration(userID: String, mpinID: String, now: Date) async throws -> Bool {
        try await write { db in
            let state = try String.fetchOne(db, sql: "SELECT state FROM users WHERE user_id = ?", arguments: [userID])
            guard UserStatePolicy.mayAct(state) else { return false }
            try db.execute(sql: "UPDATE registrations SET active = 1 WHERE mpin_id = ? AND user_id = ? AND expires > ?",
                           arguments: [mpinID, userID, now.timeIntervalSince1970])
            guard db.changesCount == 1 else { return false }
            try db.execute(sql: "UPDATE users SET state = 'active' WHERE user_id = ?", arguments: [userID])
            return true
        }
    }

    package func identities(userID: String) async throws -> [IssuedIdentity] {
        try await read { db in
            try Row.fetchAll(db, sql: "SELECT mpin_id, created, attempts FROM identities WHERE user_id = ? ORDER BY created, mpin_id",
                             arguments: [userID]).map { r in
                IssuedIdentity(mpinID: r["mpin_id"], created: r["created"], failedAttempts: r["attempts"], maxAttempts: Int.max)
            }
        }
    }

    package func unblockIdentity(userID: String, mpinID: String) async throws -> Bool {
        try await write { db in
            try db.execute(sql: "UPDATE identities SET attempts = 0, blocked_at = NULL WHERE mpin_id = ? AND user_id = ?",
                           arguments: [mpinID, userID])
            guard db.changesCount == 1 else { return false }
            try db.execute(sql: "UPDATE signing_keys SET attempts = 0, blocked_at = NULL WHERE user_id = ?", arguments: [userID])
            return true
        }
    }

    package func addApp(clientID: String, name: String, redirectURI: String, logoURL: String, secretHash: String,
                idTokenAlg: String, now: Date) async throws {
        try await write { db in
            try db.execute(sql: """
                INSERT INTO apps (client_id, name, redirect_uri, logo_url, secret_hash, id_token_alg, created)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """, arguments: [clientID, name, redirectURI, logoURL, secretHash, idTokenAlg, now.timeIntervalSince1970])
        }
    }

    package func listApps() async throws -> [AppSummary] {
        try await read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM apps ORDER BY created, client_id").map { r in
                AppSummary(clientId: r["client_id"], name: r["name"], redirectURI: r["redirect_uri"],
                           logoURL: r["logo_url"], created: r["created"], idTokenAlg: r["id_token_alg"])
            }
        }
    }

    package func deleteApp(clientID: String) async throws -> Bool {
        try await write { db in
            try db.execute(sql: "DELETE FROM apps WHERE client_id = ?", arguments: [clientID])
            guard db.changesCount > 0 else { return false }
            // Its live sessions and unused codes die with it (docs/MFA.md §2).
            try db.execute(sql: "DELETE FROM mfa_sessions WHERE client_id = ?", arguments: [clientID])
            try db.execute(sql: "DELETE FROM authz_codes WHERE client_id = ?", arguments: [clientID])
            return true
        }
    }
}
