package import Foundation
import MPinCrypto
package import MPinWire

/// One offline login a host reported (docs/PROTOCOL.md §4.5.2), as the storage keeps it and
/// `mpin-server user show` shows it.
package struct OfflineLoginEntry: Codable, Sendable, Equatable {
    /// Hex SHA-256 of the identity's mpinId that logged in online and reported it, as
    /// `mpin-server user identities` and `mpin list --fingerprints` show it.
    package var fingerprint: String
    /// The host's name for itself, and the address its report came from.
    package var host: String
    package var source: String
    /// The PAM service and the outcome (`OK` or `INCORRECT_PIN`) of the offline login.
    package var service: String
    package var outcome: String
    /// When it happened by the host's clock, and when the server received the report (seconds
    /// since 1970).
    package var time: Int64
    package var reported: Double
    /// The mpinId, lower-case hex (not shown).
    var mpinID: String
    /// The id the host gave the login (OfflineLoginReport.Login.id; not shown).
    var id: String

    enum CodingKeys: String, CodingKey { case fingerprint, host, source, service, outcome, time, reported }

    package init(mpinID: String, id: String, host: String, source: String, service: String, outcome: String, time: Int64,
                 reported: Double) {
        self.mpinID = mpinID
        self.id = id
        fingerprint = MPinIdentity.fingerprint(mpinIdHex: mpinID) ?? ""
        self.host = host; self.source = source; self.service = service; self.outcome = outcome
        self.time = time; self.reported = reported
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        fingerprint = try c.decode(String.self, forKey: .fingerprint)
        host = try c.decode(String.self, forKey: .host)
        source = try c.decode(String.self, forKey: .source)
        service = try c.decode(String.self, forKey: .service)
        outcome = try c.decode(String.self, forKey: .outcome)
        time = try c.decode(Int64.self, forKey: .time)
        reported = try c.decode(Double.self, forKey: .reported)
        mpinID = ""
        id = ""
    }

    /// The row's key: one per identity and login id, so that a report sent again (the host did
    /// not see the answer, or did not believe it) adds nothing, and every login the host told
    /// apart stays apart.
    var key: String {
        Hex.encode(SHA256.hash(Array("\(mpinID)\n\(id)".utf8)))
    }
}

/// How the offline logins hosts report are kept: both backends run these statements.
enum OfflineLoginLog {
    /// The most kept per user; the oldest (by the host's time) beyond it are dropped with each
    /// report, so that no host can grow the table without bound.
    static let maxPerUser = 200

    /// Adds one entry unless its key is there (the dialect's "or ignore" is the caller's).
    /// Parameters: key, user, mpinId, host, source, service, outcome, time, reported.
    static let columns = "(entry_key, user_id, mpin_id, host, source, service, outcome, login_time, reported)"

    /// How far ahead of the server's clock a reported login may be dated (seconds).
    static let maxClockAhead: Double = 86_400

    /// Drops the user's entries beyond `maxPerUser`, oldest first (ties by the time received,
    /// then the key, as `list` orders them): exactly `maxPerUser` stay, whatever times repeat.
    /// Parameters: user, user.
    static let trim = """
        DELETE FROM offline_logins WHERE user_id = ? AND entry_key NOT IN (SELECT entry_key FROM offline_logins
        WHERE user_id = ? ORDER BY login_time DESC, reported DESC, entry_key LIMIT \(maxPerUser))
        """

    /// The user's entries, newest first. Parameter: user.
    static let list = """
        SELECT mpin_id, host, source, service, outcome, login_time, reported FROM offline_logins
        WHERE user_id = ? ORDER BY login_time DESC, reported DESC, entry_key
        """
}
