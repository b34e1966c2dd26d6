import Foundation
import Logging
import PostgresNIO

/// The administrator's operations on PostgreSQL, as `SQLiteStorage+Admin`.
extension PostgresStorage {
    func listUsers(maxAttempts: Int) async throws -> [UserSummary] {
        try await run(PostgresQuery(unsafeSQL: UserSummary.listQuery), durable: false).map { row in
            let (user, state, identities, pending, attempts, blockedAt) = try row.decode((String, String, Int, Int, Int, Double?).self)
            return UserSummary(userId: user, state: state, identities: identities, pendingRegistrations: pending,
                               failedAttempts: attempts, blockedAt: blockedAt, maxAttempts: maxAttempts)
        }
    }

    func addUser(userID: String, activationCodeHash hash: String, now: Date) async throws {
        try await run("""
            INSERT INTO users (user_id, state, activation_code_hash, created) VALUES (\(userID), 'pending', \(hash), \(now.timeIntervalSince1970))
            ON CONFLICT (user_id) DO UPDATE SET activation_code_hash = EXCLUDED.activation_code_hash,
              state = CASE WHEN users.state = 'revoked' THEN 'pending' ELSE users.state END
            """)
    }

    func changeUser(userID: String, _ change: UserChange) async throws -> Bool {
        let logger = logger
        return try await transaction { c in
            guard try await !c.rows("SELECT 1 FROM users WHERE user_id = \(userID) FOR UPDATE", logger).isEmpty
            else { return false }
            for s in UserChange.statements(change) {
                var binds = PostgresBindings()
                binds.append(userID)
                try await c.rows(PostgresQuery(unsafeSQL: s.replacingOccurrences(of: "?", with: "$1"), binds: binds),
                                  logger)
            }
            return true
        }
    }

    func pendingRegistrations(userID: String, now: Date) async throws -> [PendingRegistration] {
        try await run("""
            SELECT mpin_id, created, expires, device_name, source, active FROM registrations
            WHERE user_id = \(userID) AND expires > \(now.timeIntervalSince1970) ORDER BY created, mpin_id
            """, durable: false).map { row in
            let (mpinID, created, expires, device, source, active) = try row.decode((String, Double, Double, String, String, Bool).self)
            return PendingRegistration(mpinID: mpinID, created: created, expires: expires, deviceName: device, source: source,
                                       active: active)
        }
    }

    func activateRegistration(userID: String, mpinID: String, now: Date) async throws -> Bool {
        let logger = logger, t = now.timeIntervalSince1970
        return try await transaction { c in
            let state = try await c.rows("SELECT state FROM users WHERE user_id = \(userID) FOR UPDATE", logger)
                .first.map { try $0.decode(String.self) }
            guard UserStatePolicy.mayAct(state) else { return false }
            let updated = try await c.rows("""
                UPDATE registrations SET active = TRUE WHERE mpin_id = \(mpinID) AND user_id = \(userID) AND expires > \(t)
                RETURNING 1
                """, logger)
            guard updated.count == 1 else { return false }
            try await c.rows("UPDATE users SET state = 'active' WHERE user_id = \(userID)", logger)
            return true
        }
    }

    func identities(userID: String) async throws -> [IssuedIdentity] {
        try await run("""
            SELECT mpin_id, created, attempts FROM identities WHERE user_id = \(userID) ORDER BY created, mpin_id
            """, durable: false).map { row in
            let (mpinID, created, attempts) = try row.decode((String, Double, Int).self)
            return IssuedIdentity(mpinID: mpinID, created: created, failedAttempts: attempts, maxAttempts: Int.max)
        }
    }

    func unblockIdentity(userID: String, mpinID: String) async throws -> Bool {
        let logger = logger
        return try await transaction { c in
            let updated = try await c.rows("""
                UPDATE identities SET attempts = 0, blocked_at = NULL WHERE mpin_id = \(mpinID) AND user_id = \(userID) RETURNING 1
                """, logger)
            guard updated.count == 1 else { return false }
            try await c.rows("UPDATE signing_keys SET attempts = 0, blocked_at = NULL WHERE user_id = \(userID)", logger)
            return true
        }
    }

    func addApp(clientID: String, name: String, redirectURI: String, logoURL: String, secretHash: String,
                idTokenAlg: String, now: Date) async throws {
        try await run("""
            INSERT INTO apps (client_id, name, redirect_uri, logo_url, secret_hash, id_token_alg, created)
            VALUES (\(clientID), \(name), \(redirectURI), \(logoURL), \(secretHash), \(idTokenAlg), \(now.timeIntervalSince1970))
            """)
    }

    func listApps() async throws -> [AppSummary] {
        try await run("SELECT client_id, name, redirect_uri, logo_url, created, id_token_alg FROM apps ORDER BY created, client_id",
                      durable: false).map { row in
            let (id, name, redirect, logo, created, alg) = try row.decode((String, String, String, String, Double, String).self)
            return AppSummary(clientId: id, name: name, redirectURI: redirect, logoURL: logo, created: created, idTokenAlg: alg)
        }
    }

    func deleteApp(clientID: String) async throws -> Bool {
        let logger = logger
        return try await transaction { c in
            guard try await !c.rows("DELETE FROM apps WHERE client_id = \(clientID) RETURNING 1", logger).isEmpty
            else { return false }
            // Its live sessions and unused codes die with it (docs/MFA.md §2).
            try await c.rows("DELETE FROM mfa_sessions WHERE client_id = \(clientID)", logger)
            try await c.rows("DELETE FROM authz_codes WHERE client_id = \(clientID)", logger)
            return true
        }
    }
}
