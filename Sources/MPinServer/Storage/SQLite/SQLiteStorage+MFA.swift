package import Foundation
import GRDB
import MPinWire

extension SQLiteStorage {
    package func app(clientID: String) async throws -> StoredApp? {
        try await read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM apps WHERE client_id = ?", arguments: [clientID]).map { r in
                StoredApp(clientID: r["client_id"], name: r["name"], logoURL: r["logo_url"],
                          redirectURI: r["redirect_uri"], secretHash: r["secret_hash"], idTokenAlg: r["id_token_alg"])
            }
        }
    }

    package func createSession(_ s: NewMFASession) async throws -> Bool {
        try await write { db in
            try db.execute(sql: """
                INSERT OR IGNORE INTO mfa_sessions (access_code_hash, web_ott_hash, client_id, redirect_uri, oauth_state,
                  nonce, code_challenge, preroll_id, state, expires) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'new', ?)
                """, arguments: [s.accessCodeHash, s.webOTTHash, s.clientID, s.redirectURI, s.state, s.nonce,
                                 s.codeChallenge, s.prerollID, s.expires.timeIntervalSince1970])
            return db.changesCount > 0
        }
    }

    package func codeStatus(accessCodeHash: String, verb: CodeStatusVerb, now: Date) async throws -> SessionView? {
        try await write { db in
            guard let row = try Row.fetchOne(db, sql: """
                SELECT s.preroll_id, s.state, a.name, a.logo_url FROM mfa_sessions s JOIN apps a ON a.client_id = s.client_id
                WHERE s.access_code_hash = ? AND s.expires > ?
                """, arguments: [accessCodeHash, now.timeIntervalSince1970]) else { return nil }
            let state: String = row["state"]
            guard ["new", "wid", "user"].contains(state) else { return nil }
            switch verb {
            case .wid:
                if state == "new" {
                    try db.execute(sql: "UPDATE mfa_sessions SET state = 'wid' WHERE access_code_hash = ?",
                                   arguments: [accessCodeHash])
                }
            case .user(let userID):
                try db.execute(sql: "UPDATE mfa_sessions SET state = 'user', user_id = ? WHERE access_code_hash = ?",
                               arguments: [userID, accessCodeHash])
            case .abort:
                try db.execute(sql: "UPDATE mfa_sessions SET state = 'aborted' WHERE access_code_hash = ?",
                               arguments: [accessCodeHash])
            }
            return SessionView(prerollID: row["preroll_id"], appName: row["name"], appLogoURL: row["logo_url"])
        }
    }

    package func pollSession(webOTTHash: String, now: Date) async throws -> SessionPoll? {
        try await write { db in
            guard let row = try Row.fetchOne(db, sql: """
                SELECT state, redirect_url FROM mfa_sessions WHERE web_ott_hash = ? AND expires > ?
                """, arguments: [webOTTHash, now.timeIntervalSince1970]) else { return nil }
            let (poll, handsOut) = MFASessionPolicy.poll(state: row["state"], redirectURL: row["redirect_url"])
            if handsOut {
                // Handed out once; the row forgets the URL (and so the code) at once.
                try db.execute(sql: "UPDATE mfa_sessions SET state = 'done', redirect_url = NULL WHERE web_ott_hash = ?",
                               arguments: [webOTTHash])
            }
            return poll
        }
    }

    package func redeem(codeHash: String, clientID: String, now: Date) async throws -> Redemption {
        try await write { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM authz_codes WHERE code_hash = ?", arguments: [codeHash])
            else { return .invalid }
            let owner: String = row["client_id"]
            // Another client's request leaves the code alone: it proves nothing about this one.
            guard owner == clientID else { return .invalid }
            let used: Bool = row["used"]
            let expires: Double = row["expires"]
            // The first request with the right client uses the code up, whatever the later checks say.
            try db.execute(sql: "UPDATE authz_codes SET used = 1 WHERE code_hash = ?", arguments: [codeHash])
            guard !used, expires > now.timeIntervalSince1970 else { return .invalid }
            return .granted(AuthorizationGrant(redirectURI: row["redirect_uri"], codeChallenge: row["code_challenge"],
                                               nonce: row["nonce"], userID: row["user_id"],
                                               authTime: Date(timeIntervalSince1970: row["auth_time"])))
        }
    }

    package func issueRegCode(codeHash: String, userID: String, expires: Date, now: Date) async throws -> Bool {
        try await write { db in
            // With the count of wrong codes the user's live codes carry (`WrongRegCodeCounter`).
            try db.execute(sql: """
                INSERT OR IGNORE INTO reg_codes (code_hash, user_id, expires, failures)
                VALUES (?, ?, ?, (SELECT COALESCE(MAX(failures), 0) FROM reg_codes WHERE user_id = ? AND expires > ?))
                """, arguments: [codeHash, userID, expires.timeIntervalSince1970, userID, now.timeIntervalSince1970])
            return db.changesCount == 1
        }
    }

    /// The access-code step of a successful verdict (docs/MFA.md §6, step 3): the session becomes
    /// authenticated for `userID` and an authorization code is stored; nil when the session is
    /// no longer usable.
    static func authorize(_ db: Database, accessCodeHash: String, userID: String, code: NewAuthorizationCode,
                          now: Date) throws -> IssuedAuthorization? {
        guard let row = try Row.fetchOne(db, sql: """
            SELECT client_id, redirect_uri, oauth_state, nonce, code_challenge FROM mfa_sessions
            WHERE access_code_hash = ? AND expires > ? AND state IN ('new', 'wid', 'user')
              AND (user_id IS NULL OR user_id = ?)
            """, arguments: [accessCodeHash, now.timeIntervalSince1970, userID]) else { return nil }
        let redirectURI: String = row["redirect_uri"]
        let redirectURL = OAuthRedirect.url(redirectURI, ["code": code.code, "state": row["oauth_state"]])
        try db.execute(sql: """
            UPDATE mfa_sessions SET state = 'authenticated', user_id = ?, redirect_url = ? WHERE access_code_hash = ?
            """, arguments: [userID, redirectURL, accessCodeHash])
        try db.execute(sql: """
            INSERT INTO authz_codes (code_hash, client_id, redirect_uri, code_challenge, nonce, user_id, auth_time, expires)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [code.codeHash, row["client_id"] as String, redirectURI, row["code_challenge"] as String,
                             row["nonce"] as String?, userID, now.timeIntervalSince1970, code.expires.timeIntervalSince1970])
        return IssuedAuthorization(code: code.code, redirectURL: redirectURL)
    }
}
