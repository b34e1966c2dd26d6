import Foundation
import PostgresNIO

/// The two statements of every direct login on PostgreSQL (pass 2's record, the final step
/// decided on what pass 2 read), as prepared statements: each pooled connection parses and
/// plans them once and then sends only their values, and reads no row description per login.
/// What they decide is `PostgresStorage.saveAuth`'s and `FinalStepPlan`'s; here is only their SQL.
enum PostgresLoginStatements {
    /// A direct login's pass-2 record (`INSERT OR REPLACE`), and its identity as it stands:
    /// one row, `(user_id, attempts, blocked_at, state)`, all NULL when there is no such identity.
    struct SaveDirectAuth: PostgresPreparedStatement {
        static let name = "mpin_save_direct_auth"
        static let sql = """
            WITH saved AS (
                INSERT INTO auth (auth_ott_hash, mpin_id, success, wid, otp, expires) VALUES ($1, $2, $3, '', $4, $5)
                \(PostgresStorage.authUpsert))
            SELECT i.user_id, i.attempts, i.blocked_at, u.state FROM saved
            LEFT JOIN identities i ON i.mpin_id = $2 LEFT JOIN users u ON u.user_id = i.user_id
            """
        static var bindingDataTypes: [PostgresDataType] { [.text, .text, .bool, .text, .float8] }
        typealias Row = (String?, Int?, Double?, String?)

        var authOTTHash: String
        var mpinID: String
        var success: Bool
        var otp: String?
        var expires: Double

        func makeBindings() throws -> PostgresBindings {
            var b = PostgresBindings(capacity: 5)
            b.append(authOTTHash); b.append(mpinID); b.append(success); b.append(otp); b.append(expires)
            return b
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// A direct login's final step when its plan is the record's single use, with or without
    /// the session it opens (`FinalStepPlan.singleUse`), decided on what this node's pass 2
    /// read: applied only if the record and the identity (locked in this order, as the locked
    /// path locks them) still hold what was read, so that the locked rows would give the same
    /// plan. A row when it was applied, none when not (the caller then takes the locked path).
    /// Two final steps of one authOTT still give one verdict: the DELETE succeeds once, here or
    /// on the locked path; a concurrent counted attempt of the identity holds the row lock,
    /// and its new counter fails the check (READ COMMITTED re-reads a row it waited for).
    struct UseDirectAuth: PostgresPreparedStatement {
        static let name = "mpin_use_direct_auth"
        static let sql = """
            WITH checked AS (
                SELECT a.auth_ott_hash FROM auth a JOIN identities i ON i.mpin_id = a.mpin_id
                LEFT JOIN users u ON u.user_id = i.user_id
                WHERE a.auth_ott_hash = $1 AND a.mpin_id = $2 AND a.success = $3 AND a.wid = ''
                  AND a.otp IS NOT DISTINCT FROM $4 AND a.status IS NULL AND a.expires = $5
                  AND i.user_id = $6 AND i.attempts = $7 AND i.blocked_at IS NOT DISTINCT FROM $8
                  AND u.state IS NOT DISTINCT FROM $9
                FOR UPDATE OF a, i),
            used AS (DELETE FROM auth WHERE auth_ott_hash IN (SELECT auth_ott_hash FROM checked) RETURNING 1),
            opened AS (
                INSERT INTO sessions (token_hash, user_id, expires) SELECT $10, $6, $11 FROM used WHERE $12
                ON CONFLICT (token_hash) DO UPDATE SET user_id = EXCLUDED.user_id, expires = EXCLUDED.expires)
            SELECT 1 FROM used
            """
        static var bindingDataTypes: [PostgresDataType] {
            [.text, .text, .bool, .text, .float8, .text, .int8, .float8, .text, .text, .float8, .bool]
        }
        typealias Row = PostgresRow

        var authOTTHash: String
        var record: AuthRecord
        var identity: IdentityCounter
        /// The plan's writes beside the record's deletion: the session it opens, if any, which
        /// is the identity's user's (`$6`), as `FinalStepPlan.decide` opens it.
        var singleUse: FinalStepPlan.SingleUse
        var session: NewSession? { singleUse.session?.session }

        func makeBindings() throws -> PostgresBindings {
            var b = PostgresBindings(capacity: 12)
            b.append(authOTTHash); b.append(record.mpinID); b.append(record.success); b.append(record.otp)
            b.append(record.expires); b.append(identity.userID); b.append(identity.attempts); b.append(identity.blockedAt)
            b.append(identity.userState)
            // Without a session, an empty one that `$12` (false) keeps out of the table.
            b.append(session?.tokenHash ?? ""); b.append(session?.expires.timeIntervalSince1970 ?? 0); b.append(session != nil)
            return b
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { row }
    }
}
