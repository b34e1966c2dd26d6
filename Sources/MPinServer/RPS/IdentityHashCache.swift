import MPinCrypto

/// MPIN_SERVER_1's hashes (H(ID) and the time-permit hash for a day) per identity and day.
/// They are public and cost two hash-to-curve operations (~90 µs) per pass 2, for a value that
/// only changes once a day. Keyed by SHA-256 of the mpinId, so an entry is ~200 bytes whatever
/// the mpinId's length.
final class IdentityHashCache: Sendable {
    private struct Key: Hashable, Sendable { var digest: [UInt8]; var date: Int32 }
    private struct Hashes: Sendable { var hid: [UInt8]; var htid: [UInt8]? }
    private let map = BoundedMap<Key, Hashes>(capacity: 50_000)

    /// The cached hashes on `date` of the identity whose `MPin.hashID` is `digest`, if any.
    func lookup(date: Int32, digest: [UInt8]) -> (hid: [UInt8], htid: [UInt8]?)? {
        map[Key(digest: digest, date: date)].map { ($0.hid, $0.htid) }
    }

    /// Remembers the hashes of an identity that has just authenticated.
    func insert(date: Int32, digest: [UInt8], hid: [UInt8], htid: [UInt8]?) {
        map.insert(Hashes(hid: hid, htid: htid), for: Key(digest: digest, date: date))
    }
}
