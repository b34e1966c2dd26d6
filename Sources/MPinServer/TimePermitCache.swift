import Synchronization

/// D-TA 1's time-permit shares per identity and day, as the original RPS kept them
/// (`cacheTimePermits`, PROTOCOL.md §4.1 step 3): a login's permit request then costs no D-TA
/// call (a round trip when the D-TA runs apart). The revocation check happens before the cache
/// is consulted. Keyed by the hashed mpinId; bounded: emptied when full; other days' entries
/// are never returned.
final class TimePermitCache: Sendable {
    private struct Key: Hashable { var hashMpinID: String; var day: Int32 }
    private let entries = Mutex([Key: String]())
    private let capacity: Int

    init(capacity: Int = 100_000) { self.capacity = capacity }

    func share(hashMpinID: String, day: Int32) -> String? {
        entries.withLock { $0[Key(hashMpinID: hashMpinID, day: day)] }
    }

    func insert(_ share: String, hashMpinID: String, day: Int32) {
        entries.withLock { e in
            if e.count >= capacity { e.removeAll(keepingCapacity: true) }
            e[Key(hashMpinID: hashMpinID, day: day)] = share
        }
    }
}
