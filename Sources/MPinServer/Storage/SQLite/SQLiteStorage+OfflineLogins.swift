import GRDB

/// Offline logins hosts reported (`OfflineLoginLog`).
extension SQLiteStorage {
    package func recordOfflineLogins(_ entries: [OfflineLoginEntry], userID: String) async throws -> [OfflineLoginEntry] {
        try await write { db in
            var added: [OfflineLoginEntry] = []
            for e in entries {
                try db.execute(sql: "INSERT OR IGNORE INTO offline_logins \(OfflineLoginLog.columns) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                               arguments: [e.key, userID, e.mpinID, e.host, e.source, e.service, e.outcome, e.time, e.reported])
                if db.changesCount == 1 { added.append(e) }
            }
            try db.execute(sql: OfflineLoginLog.trim, arguments: [userID, userID])
            return added
        }
    }

    package func offlineLogins(userID: String) async throws -> [OfflineLoginEntry] {
        try await read { db in
            try Row.fetchAll(db, sql: OfflineLoginLog.list, arguments: [userID]).map { r in
                OfflineLoginEntry(mpinID: r["mpin_id"], id: "", host: r["host"], source: r["source"], service: r["service"],
                                  outcome: r["outcome"], time: r["login_time"], reported: r["reported"])
            }
        }
    }
}
