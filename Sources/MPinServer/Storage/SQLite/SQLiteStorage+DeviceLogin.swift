package import Foundation
import GRDB

extension SQLiteStorage {
    /// The description and expiry of a live access number no device has approved yet.
    package func accessNumberDescription(wid: String, now: Date) async throws -> (description: String, expires: Date)? {
        try await read { db in
            guard let row = try Row.fetchOne(db, sql: """
                SELECT description, expires FROM access_numbers WHERE wid = ? AND expires > ? AND auth_ott IS NULL
                """, arguments: [wid, now.timeIntervalSince1970]) else { return nil }
            let expires: Double = row["expires"]
            return (row["description"], Date(timeIntervalSince1970: expires))
        }
    }

    /// A web login's access number keeps `ac:` + its access code's hash where a device login's
    /// keeps the webOTT hash (which is hex, so never starts so).
    package func webLogin(accessNumber: String, now: Date) async throws -> String? {
        try await read { db in
            guard let stored = try String.fetchOne(db, sql: """
                SELECT web_ott_hash FROM access_numbers WHERE wid = ? AND expires > ?
                """, arguments: [accessNumber, now.timeIntervalSince1970]),
                  stored.hasPrefix(AccessCode.storedPrefix) else { return nil }
            return stored
        }
    }

    package func webLoginDescription(accessCodeHash: String, now: Date) async throws -> String? {
        try await read { db in
            try String.fetchOne(db, sql: "SELECT description FROM access_numbers WHERE web_ott_hash = ? AND expires > ?",
                                arguments: [AccessCode.storedPrefix + accessCodeHash, now.timeIntervalSince1970])
        }
    }
}
