/// D-TA 1's time-permit shares per identity and day, as the original RPS kept them
/// (`cacheTimePermits`, docs/PROTOCOL.md §4.1 step 3): a login's permit request then costs no D-TA
/// call (a round trip when the D-TA runs apart). The revocation check happens before the cache
/// is consulted. Keyed by the hashed mpinId; other days' entries are never returned.
final class TimePermitCache: Sendable {
    private struct Key: Hashable, Sendable { var hashMpinID: String; var day: Int32 }
    private let map = BoundedMap<Key, String>(capacity: 100_000)

    func share(hashMpinID: String, day: Int32) -> String? { map[Key(hashMpinID: hashMpinID, day: day)] }

    func insert(_ share: String, hashMpinID: String, day: Int32) {
        map.insert(share, for: Key(hashMpinID: hashMpinID, day: day))
    }
}
