import Foundation
import MPinCrypto
import Synchronization

/// Pass-1 state (U, UT, y) between pass 1 and pass 2: 15 seconds, consumed by pass 2. Kept in
/// memory: it is worthless after a restart (the client just redoes pass 1) and this saves two
/// database writes per authentication. One pending pass 1 per identity, as in the original,
/// keyed by the mpinId's SHA-256 so that an entry's size does not depend on the client.
final class Pass1Store: Sendable {
    private struct Entry { var u: [UInt8]; var ut: [UInt8]; var y: [UInt8]; var expires: Date }
    private struct State { var entries: [[UInt8]: Entry] = [:]; var insertsSincePrune = 0 }
    private let state = Mutex(State())
    /// Above this many pending entries new pass 1s are refused (memory bound under abuse).
    private let capacity: Int

    init(capacity: Int = 100_000) { self.capacity = capacity }

    /// Stores the state; false when full of live entries.
    func save(mpinID: [UInt8], u: [UInt8], ut: [UInt8], y: [UInt8], expires: Date, now: Date) -> Bool {
        let key = MPin.hashID(mpinID)
        return state.withLock { s in
            s.insertsSincePrune += 1
            if s.insertsSincePrune >= 1024 || s.entries.count >= capacity {
                s.entries = s.entries.filter { $0.value.expires > now }
                s.insertsSincePrune = 0
            }
            guard s.entries.count < capacity || s.entries[key] != nil else { return false }
            s.entries[key] = Entry(u: u, ut: ut, y: y, expires: expires)
            return true
        }
    }

    /// Removes and returns the state of `mpinID`, nil if none or expired.
    func take(mpinID: [UInt8], now: Date) -> (u: [UInt8], ut: [UInt8], y: [UInt8])? {
        let key = MPin.hashID(mpinID)
        return state.withLock { s in
            guard let e = s.entries.removeValue(forKey: key), e.expires > now else { return nil }
            return (e.u, e.ut, e.y)
        }
    }
}
