import Foundation
import Logging
import PostgresNIO

/// The MFA platform's state (docs/MFA.md §11) on PostgreSQL, as `SQLiteStorage+MFA`.
extension PostgresStorage {
    func app(clientID: String) async throws -> StoredApp? {
        let rows = try await run("""
            SELECT client_id, name, logo_url, redirect_uri, secret_hash, id_token_alg FROM apps WHERE client_id = \(clientID)
            """, durable: false)
        guard let row = rows.first else { return nil }
        let (id, name, logo, redirect, secret, alg) = try row.decode((String, String, String, String, String, String).self)
        return StoredApp(clientID: id, name: name, logoURL: logo, redirectURI: redirect, secretHash: secret, idTokenAlg: alg)
    }

    func createSession(_ s: NewMFASession) async throws -> Bool {
        try await !run("""
            INSERT INTO mfa_sessions (access_code_hash, web_ott_hash, client_id, redirect_uri, oauth_state,
              nonce, code_challenge, preroll_id, state, expires)
            VALUES (\(s.accessCodeHash), \(s.webOTTHash), \(s.clientID), \(s.redirectURI), \(s.state), \(s.nonce),
              \(s.codeChallenge), \(s.prerollID), 'new', \(s.expires.timeIntervalSince1970))
            ON CONFLICT DO NOTHING RETURNING 1
            """, durable: false).isEmpty
    }

    func codeStatus(accessCodeHash: String, verb: CodeStatusVerb, now: Date) async throws -> SessionView? {
        let logger = logger
        return try await transaction(durable: false) { c in
            // The session's row, locked: its state decides and changes here.
            guard let row = try await c.rows("""
                SELECT s.preroll_id, s.state, a.name, a.logo_url FROM mfa_sessions s JOIN apps a ON a.client_id = s.client_id
                WHERE s.access_code_hash = \(accessCodeHash) AND s.expires > \(now.timeIntervalSince1970) FOR UPDATE OF s
                """, logger).first else { return nil }
            let (preroll, state, name, logo) = try row.decode((String, String, String, String).self)
            guard ["new", "wid", "user"].contains(state) else { return nil }
            switch verb {
            case .wid:
                if state == "new" {
                    try await c.rows("UPDATE mfa_sessions SET state = 'wid' WHERE access_code_hash = \(accessCodeHash)",
                                      logger)
                }
            case .user(let userID):
                try await c.rows("""
                    UPDATE mfa_sessions SET state = 'user', user_id = \(userID) WHERE access_code_hash = \(accessCodeHash)
                    """, logger)
            case .abort:
                try await c.rows("UPDATE mfa_sessions SET state = 'aborted' WHERE access_code_hash = \(accessCodeHash)",
                                  logger)
            }
            return SessionView(prerollID: preroll, appName: name, appLogoURL: logo)
        }
    }

    func pollSession(webOTTHash: String, now: Date) async throws -> SessionPoll? {
        let logger = logger
        return try await transaction { c in
            // Locked: the redirect (with its code) is handed out once, whichever node is polled.
            guard let row = try await c.rows("""
                SELECT state, redirect_url FROM mfa_sessions WHERE web_ott_hash = \(webOTTHash)
                  AND expires > \(now.timeIntervalSince1970) FOR UPDATE
                """, logger).first else { return nil }
            let (state, url) = try row.decode((String, String?).self)
            let (poll, handsOut) = MFASessionPolicy.poll(state: state, redirectURL: url)
            if handsOut {
                try await c.rows("""
                    UPDATE mfa_sessions SET state = 'done', redirect_url = NULL WHERE web_ott_hash = \(webOTTHash)
                    """, logger)
            }
            return poll
        }
    }

    func redeem(codeHash: String, clientID: String, now: Date) async throws -> Redemption {
        let logger = logger
        return try await transaction { c in
            // Locked: a concurrent redemption (any node) waits, then finds the code used.
            guard let row = try await c.rows("""
                SELECT client_id, used, expires, redirect_uri, code_challenge, nonce, user_id, auth_time
                FROM authz_codes WHERE code_hash = \(codeHash) FOR UPDATE
                """, logger).first else { return .invalid }
            let (owner, used, expires, redirect, challenge, nonce, user, authTime) =
                try row.decode((String, Bool, Double, String, String, String?, String, Double).self)
            // Another client's request leaves the code alone: it proves nothing about this one.
            guard owner == clientID else { return .invalid }
            // The first request with the right client uses the code up, whatever the later checks say.
            try await c.rows("UPDATE authz_codes SET used = TRUE WHERE code_hash = \(codeHash)", logger)
            guard !used, expires > now.timeIntervalSince1970 else { return .invalid }
            return .granted(AuthorizationGrant(redirectURI: redirect, codeChallenge: challenge, nonce: nonce, userID: user,
                                               authTime: Date(timeIntervalSince1970: authTime)))
        }
    }

    func issueRegCode(codeHash: String, userID: String, expires: Date, now: Date) async throws -> Bool {
        // With the count of wrong codes the user's live codes carry (`WrongRegCodeCounter`).
        try await run("""
            INSERT INTO reg_codes (code_hash, user_id, expires, failures)
            VALUES (\(codeHash), \(userID), \(expires.timeIntervalSince1970),
                    (SELECT COALESCE(MAX(failures), 0) FROM reg_codes WHERE user_id = \(userID) AND expires > \(now.timeIntervalSince1970)))
            ON CONFLICT DO NOTHING RETURNING 1
            """).count == 1
    }

    /// The access-code step of a successful verdict (docs/MFA.md §6, step 3), in the verdict's
    /// transaction: the session (locked) becomes authenticated and an authorization code is stored.
    static func authorize(_ c: PostgresConnection, accessCodeHash: String, userID: String, code: NewAuthorizationCode,
                          now: Date, logger: Logger) async throws -> IssuedAuthorization? {
        guard let row = try await c.rows("""
            SELECT client_id, redirect_uri, oauth_state, nonce, code_challenge FROM mfa_sessions
            WHERE access_code_hash = \(accessCodeHash) AND expires > \(now.timeIntervalSince1970)
              AND state IN ('new', 'wid', 'user') AND (user_id IS NULL OR user_id = \(userID))
            FOR UPDATE
            """, logger).first else { return nil }
        let (clientID, redirectURI, oauthState, nonce, challenge) = try row.decode((String, String, String, String?, String).self)
        let redirectURL = OAuthRedirect.url(redirectURI, ["code": code.code, "state": oauthState])
        try await c.rows("""
            UPDATE mfa_sessions SET state = 'authenticated', user_id = \(userID), redirect_url = \(redirectURL)
            WHERE access_code_hash = \(accessCodeHash)
            """, logger)
        try await c.rows("""
            INSERT INTO authz_codes (code_hash, client_id, redirect_uri, code_challenge, nonce, user_id, auth_time, expires)
            VALUES (\(code.codeHash), \(clientID), \(redirectURI), \(challenge), \(nonce), \(userID),
              \(now.timeIntervalSince1970), \(code.expires.timeIntervalSince1970))
            """, logger)
        return IssuedAuthorization(code: code.code, redirectURL: redirectURL)
    }
}
