import Foundation
import GRDB

/// What the DVS endpoints keep (docs/MFA.md §14): single-use registration tokens (as hashes)
/// and the enrolled signing keys, each with its own wrong-PIN counter.
protocol DVSStorage: Sendable {
    /// Stores a DVS registration token for `userID`; false if the hash is already taken.
    func issueDVSToken(tokenHash: String, userID: String, expires: Date) async throws -> Bool
    /// Uses up a live token; the user it was issued to, or nil (unknown, expired, used).
    func useDVSToken(tokenHash: String, now: Date) async throws -> String?
    /// The user of a live, unused token, leaving it unused (the userinfo endpoint, MFA.md §7.4).
    func dvsTokenUser(tokenHash: String, now: Date) async throws -> String?
    /// Enrols a signing key: its signing mpinId, the user and Pa (hex). False when the mpinId is taken.
    func saveSigningKey(mpinID: String, userID: String, publicKey: String, now: Date) async throws -> Bool
    /// The enrolled key of a signing mpinId, or nil.
    func signingKey(mpinID: String) async throws -> SigningKey?
    /// Records a verification's outcome against the key's counter in one transaction: a valid
    /// signature resets it, an invalid one counts, and the `maxAttempts`-th in a row blocks the
    /// key. A blocked key's signatures are never valid again.
    func recordSignatureVerdict(mpinID: String, valid: Bool, maxAttempts: Int, now: Date) async throws -> SignatureVerdict
}

/// An enrolled signing key.
struct SigningKey: Sendable, Equatable {
    var userID: String
    var publicKey: String
    var blocked: Bool
}

/// What a verification comes to once counted.
enum SignatureVerdict: Sendable, Equatable { case valid, invalid, blocked, unknownKey }

extension SQLiteStorage {
    static func registerDVSMigration(_ m: inout DatabaseMigrator) {
        m.registerMigration("v6: DVS signing keys") { db in
            try db.execute(sql: """
                CREATE TABLE dvs_tokens (
                    token_hash TEXT PRIMARY KEY NOT NULL,
                    user_id TEXT NOT NULL,
                    expires REAL NOT NULL);
                CREATE TABLE signing_keys (
                    mpin_id TEXT PRIMARY KEY NOT NULL,   -- the signing mpinId, lower-case hex
                    user_id TEXT NOT NULL,
                    public_key TEXT NOT NULL,            -- Pa, lower-case hex
                    attempts INTEGER NOT NULL DEFAULT 0,
                    blocked_at REAL,
                    created REAL NOT NULL);
                CREATE INDEX signing_keys_user ON signing_keys(user_id);
                """)
        }
    }

    func issueDVSToken(tokenHash: String, userID: String, expires: Date) async throws -> Bool {
        try writeNow { db in
            try db.execute(sql: "INSERT OR IGNORE INTO dvs_tokens (token_hash, user_id, expires) VALUES (?, ?, ?)",
                           arguments: [tokenHash, userID, expires.timeIntervalSince1970])
            return db.changesCount == 1
        }
    }

    func useDVSToken(tokenHash: String, now: Date) async throws -> String? {
        try writeNow { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT user_id, expires FROM dvs_tokens WHERE token_hash = ?",
                                             arguments: [tokenHash]) else { return nil }
            try db.execute(sql: "DELETE FROM dvs_tokens WHERE token_hash = ?", arguments: [tokenHash])
            let expires: Double = row["expires"]
            return expires > now.timeIntervalSince1970 ? row["user_id"] as String : nil
        }
    }

    func dvsTokenUser(tokenHash: String, now: Date) async throws -> String? {
        try readNow { db in
            try String.fetchOne(db, sql: "SELECT user_id FROM dvs_tokens WHERE token_hash = ? AND expires > ?",
                                arguments: [tokenHash, now.timeIntervalSince1970])
        }
    }

    func saveSigningKey(mpinID: String, userID: String, publicKey: String, now: Date) async throws -> Bool {
        try writeNow { db in
            try db.execute(sql: """
                INSERT OR IGNORE INTO signing_keys (mpin_id, user_id, public_key, created) VALUES (?, ?, ?, ?)
                """, arguments: [mpinID, userID, publicKey, now.timeIntervalSince1970])
            return db.changesCount == 1
        }
    }

    func signingKey(mpinID: String) async throws -> SigningKey? {
        try readNow { db in
            try Row.fetchOne(db, sql: "SELECT user_id, public_key, blocked_at FROM signing_keys WHERE mpin_id = ?",
                             arguments: [mpinID]).map {
                SigningKey(userID: $0["user_id"], publicKey: $0["public_key"], blocked: ($0["blocked_at"] as Double?) != nil)
            }
        }
    }

    func recordSignatureVerdict(mpinID: String, valid: Bool, maxAttempts: Int, now: Date) async throws -> SignatureVerdict {
        try writeNow { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT attempts, blocked_at FROM signing_keys WHERE mpin_id = ?",
                                             arguments: [mpinID]) else { return .unknownKey }
            if (row["blocked_at"] as Double?) != nil { return .blocked }
            if valid {
                if (row["attempts"] as Int) != 0 {
                    try db.execute(sql: "UPDATE signing_keys SET attempts = 0 WHERE mpin_id = ?", arguments: [mpinID])
                }
                return .valid
            }
            let attempts = (row["attempts"] as Int) + 1
            let blocks = attempts >= maxAttempts
            try db.execute(sql: "UPDATE signing_keys SET attempts = ?, blocked_at = ? WHERE mpin_id = ?",
                           arguments: [attempts, blocks ? now.timeIntervalSince1970 : nil, mpinID])
            return blocks ? .blocked : .invalid
        }
    }
}
