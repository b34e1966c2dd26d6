import Foundation
import GRDB
import MPinWire

/// The MFA platform's state (docs/MFA.md §11): applications, sessions started by `/authorize`
/// with their access codes, and authorization codes. Same contract as `ServerStorage`: each
/// method is one transaction, codes arrive and are kept as hashes.
protocol MFAStorage: Sendable {
    /// The application with this client id, nil when there is none.
    func app(clientID: String) async throws -> StoredApp?
    /// Stores a new session; false if its access code or webOTT hash is already in use.
    func createSession(_ session: NewMFASession) async throws -> Bool
    /// Applies a `codeStatus` verb to a live session (docs/MFA.md §4); nil when there is none.
    func codeStatus(accessCodeHash: String, verb: CodeStatusVerb, now: Date) async throws -> SessionView?
    /// The browser's poll (docs/MFA.md §5.3); nil for no live session.
    func pollSession(webOTTHash: String, now: Date) async throws -> SessionPoll?
    /// Consumes an authorization code for `clientID` (docs/MFA.md §7).
    func redeem(codeHash: String, clientID: String, now: Date) async throws -> Redemption
    /// Keeps a registration code of `userID` (docs/MFA.md §8); false if its hash is already in use.
    func issueRegCode(codeHash: String, userID: String, expires: Date, now: Date) async throws -> Bool
    /// Deletes every registration code of `userID` (too many wrong codes were tried for it);
    /// how many there were.
    func dropRegCodes(userID: String) async throws -> Int
}

/// A registered application as the server reads it.
struct StoredApp: Sendable, Equatable {
    var clientID: String
    var name: String
    var logoURL: String
    var redirectURI: String
    var secretHash: String
    /// `RS256` or `ES256` (docs/MFA.md §7.1).
    var idTokenAlg: String
}

/// A session `/authorize` creates.
struct NewMFASession: Sendable {
    var accessCodeHash: String
    var webOTTHash: String
    var clientID: String
    var redirectURI: String
    var state: String
    var nonce: String?
    var codeChallenge: String
    var prerollID: String
    var expires: Date
}

/// The verbs of `codeStatus`.
enum CodeStatusVerb: Sendable, Equatable {
    case wid
    case user(String)
    case abort
}

/// What `codeStatus` shows of a session: its app and the identity hint.
struct SessionView: Sendable, Equatable {
    var prerollID: String
    var appName: String
    var appLogoURL: String
}

/// The browser's view of its session.
enum SessionPoll: Sendable, Equatable {
    case pending
    /// The redirect carrying the authorization code, handed out once.
    case authenticated(redirectURL: String)
    case done
    /// The device refused the login (`codeStatus` `abort`).
    case refused
}

/// An authorization code to issue in the verdict's transaction.
struct NewAuthorizationCode: Sendable, Equatable {
    var code: String
    var codeHash: String
    var expires: Date
}

/// The result of an access-code login: the code and where the browser goes with it.
struct IssuedAuthorization: Sendable, Equatable {
    var code: String
    var redirectURL: String
}

/// What an authorization code grants at the token endpoint.
struct AuthorizationGrant: Sendable, Equatable {
    var redirectURI: String
    var codeChallenge: String
    var nonce: String?
    var userID: String
    var authTime: Date
}

/// The outcome of redeeming a code.
enum Redemption: Sendable, Equatable {
    /// Unknown, expired, used, or issued to another client.
    case invalid
    case granted(AuthorizationGrant)
}

/// Access codes (docs/MFA.md §1): 32 lower-case hex characters. In the pass-2 record (`auth.wid`)
/// an access code is kept as `ac:` + its hash, so the record never holds the code itself
/// and cannot be taken for an access number.
enum AccessCode {
    static let storedPrefix = "ac:"

    /// Whether a `WID` is an access code rather than an access number (which is 7 digits).
    static func isAccessCode(_ wid: String) -> Bool {
        wid.utf8.count == 32 && wid.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }
}

extension SQLiteStorage {
    func app(clientID: String) async throws -> StoredApp? {
        try readNow { db in
            try Row.fetchOne(db, sql: "SELECT * FROM apps WHERE client_id = ?", arguments: [clientID]).map { r in
                StoredApp(clientID: r["client_id"], name: r["name"], logoURL: r["logo_url"],
                          redirectURI: r["redirect_uri"], secretHash: r["secret_hash"], idTokenAlg: r["id_token_alg"])
            }
        }
    }

    func createSession(_ s: NewMFASession) async throws -> Bool {
        try writeNow { db in
            try db.execute(sql: """
                INSERT OR IGNORE INTO mfa_sessions (access_code_hash, web_ott_hash, client_id, redirect_uri, oauth_state,
                  nonce, code_challenge, preroll_id, state, expires) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'new', ?)
                """, arguments: [s.accessCodeHash, s.webOTTHash, s.clientID, s.redirectURI, s.state, s.nonce,
                                 s.codeChallenge, s.prerollID, s.expires.timeIntervalSince1970])
            return db.changesCount > 0
        }
    }

    func codeStatus(accessCodeHash: String, verb: CodeStatusVerb, now: Date) async throws -> SessionView? {
        try writeNow { db in
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

    func pollSession(webOTTHash: String, now: Date) async throws -> SessionPoll? {
        try writeNow { db in
            guard let row = try Row.fetchOne(db, sql: """
                SELECT state, redirect_url FROM mfa_sessions WHERE web_ott_hash = ? AND expires > ?
                """, arguments: [webOTTHash, now.timeIntervalSince1970]) else { return nil }
            let state: String = row["state"]
            switch state {
            case "authenticated":
                // Handed out once; the row forgets the URL (and so the code) at once.
                try db.execute(sql: "UPDATE mfa_sessions SET state = 'done', redirect_url = NULL WHERE web_ott_hash = ?",
                               arguments: [webOTTHash])
                let url: String? = row["redirect_url"]
                return .authenticated(redirectURL: url ?? "")
            case "done": return .done
            case "aborted": return .refused
            default: return .pending
            }
        }
    }

    func redeem(codeHash: String, clientID: String, now: Date) async throws -> Redemption {
        try writeNow { db in
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

    func issueRegCode(codeHash: String, userID: String, expires: Date, now: Date) async throws -> Bool {
        try writeNow { db in
            try db.execute(sql: "INSERT OR IGNORE INTO reg_codes (code_hash, user_id, expires) VALUES (?, ?, ?)",
                           arguments: [codeHash, userID, expires.timeIntervalSince1970])
            return db.changesCount == 1
        }
    }

    func dropRegCodes(userID: String) async throws -> Int {
        try writeNow { db in
            try db.execute(sql: "DELETE FROM reg_codes WHERE user_id = ?", arguments: [userID])
            return db.changesCount
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

/// Redirect URLs of the code flow (docs/MFA.md §5.3): parameters appended with `?` or `&`,
/// percent-encoded except RFC 3986's unreserved characters.
enum OAuthRedirect {
    /// Parameters with an empty value are left out (a request without `state` gets none back).
    static func url(_ base: String, _ parameters: KeyValuePairs<String, String>) -> String {
        let query = parameters.filter { !$0.value.isEmpty }.map { "\(escape($0.key))=\(escape($0.value))" }.joined(separator: "&")
        return base + (base.contains("?") ? "&" : "?") + query
    }

    static func escape(_ s: String) -> String {
        var out = ""
        for b in s.utf8 {
            switch b {
            case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, 0x2D, 0x2E, 0x5F, 0x7E: out.unicodeScalars.append(Unicode.Scalar(b))
            default: out += String(format: "%%%02X", b)
            }
        }
        return out
    }
}
