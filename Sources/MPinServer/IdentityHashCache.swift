import MPinCrypto
import Synchronization

/// MPIN_SERVER_1's hashes (H(ID) and the time-permit hash for a day) per identity and day.
/// They are public and cost two hash-to-curve operations (~90 µs) per pass 2, for a value that
/// only changes once a day. Keyed by SHA-256 of the mpinId, so an entry is ~200 bytes whatever
/// the mpinId's length; bounded: the cache is emptied when it reaches its capacity.
final class IdentityHashCache: Sendable {
    private struct Key: Hashable { var digest: [UInt8]; var date: Int32 }
    private let entries = Mutex([Key: (hid: [UInt8], htid: [UInt8]?)]())
    private let capacity: Int

    init(capacity: Int = 50_000) { self.capacity = capacity }

    /// The cached hashes for `mpinID` on `date`, if any.
    func lookup(date: Int32, mpinID: [UInt8]) -> (hid: [UInt8], htid: [UInt8]?)? {
        let key = Key(digest: MPin.hashID(mpinID), date: date)
        return entries.withLock { $0[key] }
    }

    /// Remembers the hashes of an identity that has just authenticated.
    func insert(date: Int32, mpinID: [UInt8], hid: [UInt8], htid: [UInt8]?) {
        let key = Key(digest: MPin.hashID(mpinID), date: date)
        entries.withLock { e in
            if e.count >= capacity { e.removeAll(keepingCapacity: true) }
            e[key] = (hid, htid)
        }
    }
}
