import Foundation
import Synchronization

/// How many access numbers each client address may ask for per minute (`getAccessNumber`,
/// PROTOCOL.md §5.1): a fixed one-minute window per address, in memory. Beyond the limit the
/// server answers 429. The table is bounded: when full it first drops finished windows, then,
/// if still full, starts afresh (a flood of distinct addresses resets the counts; it cannot
/// exhaust memory).
final class AccessNumberRateLimit: Sendable {
    private struct Window { var start: Double; var count: Int }
    private let windows = Mutex([String: Window]())
    let perMinute: Int
    private let capacity: Int

    init(perMinute: Int, capacity: Int = 10_000) { self.perMinute = perMinute; self.capacity = capacity }

    /// Counts one request from `address`; false when it is over the limit.
    func admit(_ address: String, now: Date = Date()) -> Bool {
        let t = now.timeIntervalSince1970
        return windows.withLock { w in
            if var current = w[address], t - current.start < 60 {
                guard current.count < perMinute else { return false }
                current.count += 1
                w[address] = current
                return true
            }
            if w.count >= capacity {
                w = w.filter { t - $0.value.start < 60 }
                if w.count >= capacity { w.removeAll(keepingCapacity: true) }
            }
            w[address] = Window(start: t, count: 1)
            return true
        }
    }
}
