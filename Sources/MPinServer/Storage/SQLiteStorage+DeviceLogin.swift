import Foundation
import GRDB

extension SQLiteStorage {
    /// The description and expiry of a live access number no device has approved yet.
    func accessNumberDescription(wid: String, now: Date) async throws -> (description: String, expires: Date)? {
        try readNow { db in
            guard let row = try Row.fetchOne(db, sql: """
                SELECT description, expires FROM access_numbers WHERE wid = ? AND expires > ? AND auth_ott IS NULL
                """, arguments: [wid, now.timeIntervalSince1970]) else { return nil }
            let expires: Double = row["expires"]
            return (row["description"], Date(timeIntervalSince1970: expires))
        }
    }
}
