import Foundation
import Synchronization

/// The pass-2 results of direct logins (no access number) that this node saved, as the final
/// step reads them, until that final step takes them: the same on both backends, the node's
/// own account of what its pass 2 decided. What a backend does with it (docs/DESIGN.md §6,
/// docs/PERFORMANCE.md §2.2):
/// * SQLite, one server per file, keeps the record here only, and writes it to the file only
///   when this store is full: the final step then costs one write transaction, not two;
/// * PostgreSQL writes the record to the database too, where another node's final step finds
///   it, and keeps here the identity its pass-2 statement read with it (`identity`), so that a
///   final step on this node can decide before reading and apply the plan in one statement
///   that checks the rows still hold what was read.
/// Either way the final step's plan is `FinalStepPlan.decide`'s, on this record. Losing the
/// records in a restart only makes the clients in flight start again, as with pass-1 state
/// (`Pass1Store`); nothing is counted before the final step.
final class PendingAuthStore: Sendable {
    struct Pending: Sendable {
        /// The pass-2 result (`wid` empty, no prior status).
        var record: AuthRecord
        /// The identity's counter and user as the backend read them beside the record, when it
        /// did (PostgreSQL's pass 2); nil: not read, or no such identity.
        var identity: IdentityCounter? = nil
    }

    private struct State { var records: [String: Pending] = [:]; var insertsSincePrune = 0 }
    private let state = Mutex(State())
    /// Above this many live records `save` refuses: the caller keeps the record in the database only.
    private let capacity: Int

    init(capacity: Int = 100_000) { self.capacity = capacity }

    /// Keeps `pending` under its authOTT hash; false when full of live records.
    func save(authOTTHash: String, _ pending: Pending, now: Date) -> Bool {
        let t = now.timeIntervalSince1970
        return state.withLock { s in
            // Expired records go every 1024 saves, not on every save once full: a full store
            // (a flood of pass 2s) must not cost a scan of it per request; it sends the
            // overflow to the database until the next prune.
            s.insertsSincePrune += 1
            if s.insertsSincePrune >= 1024 {
                s.records = s.records.filter { $0.value.record.expires > t }
                s.insertsSincePrune = 0
            }
            guard s.records.count < capacity || s.records[authOTTHash] != nil else { return false }
            s.records[authOTTHash] = pending
            return true
        }
    }

    /// Removes and returns the record of this authOTT hash; nil if none or expired (an expired
    /// one is removed too).
    func take(authOTTHash: String, now: Date) -> Pending? {
        let t = now.timeIntervalSince1970
        return state.withLock { s in
            guard let pending = s.records.removeValue(forKey: authOTTHash), pending.record.expires > t else { return nil }
            return pending
        }
    }

    /// Drops expired records (the periodic purge).
    func purgeExpired(now: Date) {
        let t = now.timeIntervalSince1970
        state.withLock { s in
            s.records = s.records.filter { $0.value.record.expires > t }
            s.insertsSincePrune = 0
        }
    }
}
