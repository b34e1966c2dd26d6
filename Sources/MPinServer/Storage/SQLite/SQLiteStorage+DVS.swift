package import Foundation
import GRDB

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

    package func issueDVSToken(tokenHash: String, userID: String, expires: Date) async throws -> Bool {
        try await write { db in
            try db.execute(sql: "INSERT OR IGNORE INTO dvs_tokens (token_hash, user_id, expires) VALUES (?, ?, ?)",
                           arguments: [tokenHash, userID, expires.timeIntervalSince1970])
            return db.changesCount == 1
        }
    }

    package func useDVSToken(tokenHash: String, now: Date) async throws -> String? {
        try await write { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT user_id, expires FROM dvs_tokens WHERE token_hash = ?",
                                             arguments: [tokenHash]) else { return nil }
            try db.execute(sql: "DELETE FROM dvs_tokens WHERE token_hash = ?", arguments: [tokenHash])
            let expires: Double = row["expires"]
            return expires > now.timeIntervalSince1970 ? row["user_id"] as String : nil
        }
    }

    package func dvsTokenUser(tokenHash: String, now: Date) async throws -> String? {
        try await read { db in
            try String.fetchOne(db, sql: "SELECT user_id FROM dvs_tokens WHERE token_hash = ? AND expires > ?",
                                arguments: [tokenHash, now.timeIntervalSince1970])
        }
    }

    package func saveSigningKey(mpinID: String, userID: String, publicKey: String, now: Date) async throws -> Bool {
        try await write { db in
            try db.execute(sql: """
                INSERT OR IGNORE INTO signing_keys (mpin_id, user_id, public_key, created) VALUES (?, ?, ?, ?)
                """, arguments: [mpinID, userID, publicKey, now.timeIntervalSince1970])
            return db.changesCount == 1
        }
    }

    package func signingKey(mpinID: String) async throws -> SigningKey? {
        try await read { db in
            try Row.fetchOne(db, sql: "SELECT user_id, public_key, blocked_at FROM signing_keys WHERE mpin_id = ?",
                             arguments: [mpinID]).map {
                SigningKey(userID: $0["user_id"], publicKey: $0["public_key"], blocked: ($0["blocked_at"] as Double?) != nil)
            }
        }
    }

    package func seenSignature(key: String) async throws -> String? {
        try await read { db in try String.fetchOne(db, sql: "SELECT digest FROM seen_signatures WHERE sig_key = ?", arguments: [key]) }
    }

    package func recordSignatureVerdict(mpinID: String, valid: Bool, seen: SeenSignature?, maxAttempts: Int,
                                                              now: Date) async throws -> SignatureVerdict {
        try await write { db in
            let counter = try Row.fetchOne(db, sql: "SELECT attempts, blocked_at FROM signing_keys WHERE mpin_id = ?",
                                           arguments: [mpinID]).map { (attempts: $0["attempts"] as Int, blockedAt: $0["blocked_at"] as Double?) }
            let decision = FinalStepVerdict.signature(counter: counter, valid: valid, maxAttempts: maxAttempts, now: now)
            if let update = decision.update {
                try db.execute(sql: "UPDATE signing_keys SET attempts = ?, blocked_at = ? WHERE mpin_id = ?",
                               arguments: [update.attempts, update.blockedAt, mpinID])
            }
            if decision.verdict == .valid, let seen {
                try db.execute(sql: """
                    INSERT OR IGNORE INTO seen_signatures (sig_key, mpin_id, user_id, digest, created)
                    SELECT ?, mpin_id, user_id, ?, ? FROM signing_keys WHERE mpin_id = ?
                    """, arguments: [seen.key, seen.digest, now.timeIntervalSince1970, mpinID])
            }
            return decision.verdict
        }
    }
}
