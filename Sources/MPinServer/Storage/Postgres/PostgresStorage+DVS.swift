import Foundation
import PostgresNIO

/// The DVS state (docs/MFA.md §14) on PostgreSQL, as `SQLiteStorage+DVS`: single-use
/// registration tokens (one `DELETE … RETURNING`) and signing keys whose wrong-PIN counter is
/// read under `SELECT … FOR UPDATE`, so that verifications on several nodes count one after another.
extension PostgresStorage {
    func issueDVSToken(tokenHash: String, userID: String, expires: Date) async throws -> Bool {
        try await run("""
            INSERT INTO dvs_tokens (token_hash, user_id, expires) VALUES (\(tokenHash), \(userID), \(expires.timeIntervalSince1970))
            ON CONFLICT DO NOTHING RETURNING 1
            """).count == 1
    }

    func useDVSToken(tokenHash: String, now: Date) async throws -> String? {
        // Used up whether live or not, once: a concurrent use (any node) finds it gone.
        guard let row = try await run("DELETE FROM dvs_tokens WHERE token_hash = \(tokenHash) RETURNING user_id, expires").first
        else { return nil }
        let (userID, expires) = try row.decode((String, Double).self)
        return expires > now.timeIntervalSince1970 ? userID : nil
    }

    func dvsTokenUser(tokenHash: String, now: Date) async throws -> String? {
        guard let row = try await run("""
            SELECT user_id FROM dvs_tokens WHERE token_hash = \(tokenHash) AND expires > \(now.timeIntervalSince1970)
            """, durable: false).first else { return nil }
        return try row.decode(String.self)
    }

    func saveSigningKey(mpinID: String, userID: String, publicKey: String, now: Date) async throws -> Bool {
        try await run("""
            INSERT INTO signing_keys (mpin_id, user_id, public_key, created)
            VALUES (\(mpinID), \(userID), \(publicKey), \(now.timeIntervalSince1970))
            ON CONFLICT DO NOTHING RETURNING 1
            """).count == 1
    }

    func signingKey(mpinID: String) async throws -> SigningKey? {
        guard let row = try await run("SELECT user_id, public_key, blocked_at FROM signing_keys WHERE mpin_id = \(mpinID)",
                                      durable: false).first
        else { return nil }
        let (userID, publicKey, blockedAt) = try row.decode((String, String, Double?).self)
        return SigningKey(userID: userID, publicKey: publicKey, blocked: blockedAt != nil)
    }

    func seenSignature(key: String) async throws -> String? {
        guard let row = try await run("SELECT digest FROM seen_signatures WHERE sig_key = \(key)", durable: false).first
        else { return nil }
        return try row.decode(String.self)
    }

    func recordSignatureVerdict(mpinID: String, valid: Bool, seen: SeenSignature?, maxAttempts: Int,
                                now: Date) async throws -> SignatureVerdict {
        let logger = logger
        return try await transaction { c in
            guard let row = try await c.rows("""
                SELECT attempts, blocked_at FROM signing_keys WHERE mpin_id = \(mpinID) FOR UPDATE
                """, logger).first else { return .unknownKey }
            let (attempts, blockedAt) = try row.decode((Int, Double?).self)
            let decision = FinalStepVerdict.signature(counter: (attempts, blockedAt), valid: valid, maxAttempts: maxAttempts, now: now)
            if let update = decision.update {
                try await c.rows("""
                    UPDATE signing_keys SET attempts = \(update.attempts), blocked_at = \(update.blockedAt) WHERE mpin_id = \(mpinID)
                    """, logger)
            }
            if decision.verdict == .valid, let seen {
                try await c.rows("""
                    INSERT INTO seen_signatures (sig_key, mpin_id, user_id, digest, created)
                    SELECT \(seen.key), mpin_id, user_id, \(seen.digest), \(now.timeIntervalSince1970) FROM signing_keys
                    WHERE mpin_id = \(mpinID) ON CONFLICT DO NOTHING
                    """, logger)
            }
            return decision.verdict
        }
    }
}
