import Foundation
import Logging
import PostgresNIO

/// Offline logins hosts reported (`OfflineLoginLog`), as `SQLiteStorage+OfflineLogins`.
extension PostgresStorage {
    func recordOfflineLogins(_ entries: [OfflineLoginEntry], userID: String) async throws -> [OfflineLoginEntry] {
        let logger = logger
        return try await transaction { c in
            var added: [OfflineLoginEntry] = []
            for e in entries {
                let inserted = try await c.rows("""
                    INSERT INTO offline_logins (entry_key, user_id, mpin_id, host, source, service, outcome, login_time, reported)
                    VALUES (\(e.key), \(userID), \(e.mpinID), \(e.host), \(e.source), \(e.service), \(e.outcome), \(e.time),
                            \(e.reported))
                    ON CONFLICT DO NOTHING RETURNING 1
                    """, logger)
                if !inserted.isEmpty { added.append(e) }
            }
            var binds = PostgresBindings()
            binds.append(userID)
            try await c.rows(PostgresQuery(unsafeSQL: OfflineLoginLog.trim.replacingOccurrences(of: "?", with: "$1"), binds: binds),
                             logger)
            return added
        }
    }

    func offlineLogins(userID: String) async throws -> [OfflineLoginEntry] {
        var binds = PostgresBindings()
        binds.append(userID)
        return try await run(PostgresQuery(unsafeSQL: OfflineLoginLog.list.replacingOccurrences(of: "?", with: "$1"), binds: binds),
                             durable: false).map { row in
            let (mpinID, host, source, service, outcome, time, reported) =
                try row.decode((String, String, String, String, String, Int64, Double).self)
            return OfflineLoginEntry(mpinID: mpinID, id: "", host: host, source: source, service: service, outcome: outcome,
                                     time: time, reported: reported)
        }
    }
}
