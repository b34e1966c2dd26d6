import MPinCrypto
import Synchronization

/// MPIN_SERVER_1's hashes (H(ID) and the time-permit hash for a day) per identity and day.
/// They are public and cost two hash-to-curve operations (~90 µs) per pass 2, for a value that
/// only changes once a day. Bounded: the cache is emptied when it reaches its capacity.
final class IdentityHashCache: Sendable {
    private struct Key: Hashable { var mpinID: [UInt8]; var date: Int32 }
    private let entries = Mutex([Key: (hid: [UInt8], htid: [UInt8]?)]())
    private let capacity: Int

    init(capacity: Int = 50_000) { self.capacity = capacity }

    /// The server-1 hashes for `mpinID` on `date`, computed on a miss.
    func hashes(date: Int32, mpinID: [UInt8]) throws -> (hid: [UInt8], htid: [UInt8]?) {
        let key = Key(mpinID: mpinID, date: date)
        if let hit = entries.withLock({ $0[key] }) { return hit }
        let value = try MPin.server1(date: date, mpinID: mpinID)
        entries.withLock { e in
            if e.count >= capacity { e.removeAll(keepingCapacity: true) }
            e[key] = (value.hid, value.htid)
        }
        return (value.hid, value.htid)
    }
}
