import Foundation
import Synchronization

/// Pass-2 results of logins without an access number, between pass 2 and the final step, kept
/// in the memory of the one server that owns the SQLite file (`SQLiteStorage`).
///
/// The final step consumes such a record in the transaction that applies the verdict and opens
/// the session, so a login costs one write transaction instead of two. Losing the records in a
/// restart only makes the clients in flight start again, as with pass-1 state
/// (`Pass1Store`); nothing is counted before the final step, which still runs in the database.
/// PostgreSQL keeps them in the database: there, another node may receive the final step.
/// There the store holds only a node's copy of what its pass 2 wrote, with the identity as read
/// in the same statement (`identity`): a hint that lets the final step decide before reading,
/// then write only if the rows still hold what the hint says (`PostgresStorage.evaluate`).
final class PendingAuthStore: Sendable {
    struct Record: Sendable {
        var mpinID: String
        var success: Bool
        var otp: String?
        var expires: Date
        /// PostgreSQL's hint: the identity's counter and user as pass 2's statement read them
        /// (nil: not read, or no such identity). Unused on SQLite.
        var identity: IdentityCounter? = nil
    }

    private struct State { var records: [String: Record] = [:]; var insertsSincePrune = 0 }
    private let state = Mutex(State())
    /// Above this many live records `save` refuses, and the caller writes to the database instead.
    private let capacity: Int

    init(capacity: Int = 100_000) { self.capacity = capacity }

    /// Keeps `record` under its authOTT hash; false when full of live records.
    func save(authOTTHash: String, _ record: Record, now: Date) -> Bool {
        state.withLock { s in
            // Expired records go every 1024 saves, not on every save once full: a full store
            // (a flood of pass 2s) must not cost a scan of it per request; it sends the
            // overflow to the database until the next prune.
            s.insertsSincePrune += 1
            if s.insertsSincePrune >= 1024 {
                s.records = s.records.filter { $0.value.expires > now }
                s.insertsSincePrune = 0
            }
            guard s.records.count < capacity || s.records[authOTTHash] != nil else { return false }
            s.records[authOTTHash] = record
            return true
        }
    }

    /// Removes and returns the record of this authOTT hash; nil if none or expired (an expired
    /// one is removed too).
    func take(authOTTHash: String, now: Date) -> Record? {
        state.withLock { s in
            guard let record = s.records.removeValue(forKey: authOTTHash), record.expires > now else { return nil }
            return record
        }
    }

    /// Drops expired records (the periodic purge).
    func purgeExpired(now: Date) {
        state.withLock { s in
            s.records = s.records.filter { $0.value.expires > now }
            s.insertsSincePrune = 0
        }
    }
}
