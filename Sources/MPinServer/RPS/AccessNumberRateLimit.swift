import Foundation
import MPinCrypto
import MPinWire
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

/// The limit on look-ups of access numbers and web logins' short codes (docs/SECURITY.md §5): per
/// client address, as before; per number, so that one login's number is not read over and over; and
/// over every caller together, because a client chooses its source addresses (127.0.0.0/8 on the
/// host itself, a /64 in IPv6) and per-address counts alone multiply with them. The overall limit
/// is ten addresses' worth: a sweep of the number space stays at that pace whatever addresses it
/// comes from.
final class LookupRateLimit: Sendable {
    let perAddress: AccessNumberRateLimit
    let perNumber: AccessNumberRateLimit
    let overall: AccessNumberRateLimit

    /// `perMinute`: per address (config.json's accessNumberRequestsPerMinute); each number at
    /// most 10 times a minute; everyone together at most 10 × `perMinute`.
    init(perMinute: Int) {
        perAddress = AccessNumberRateLimit(perMinute: perMinute)
        perNumber = AccessNumberRateLimit(perMinute: 10)
        overall = AccessNumberRateLimit(perMinute: perMinute.multipliedReportingOverflow(by: 10).partialValue)
    }

    /// Counts one look-up of `number` by `address`; false when any of the three limits is reached.
    /// A refusal by the address's own limit does not use the others' budget.
    func admit(_ address: String, number: String, now: Date = Date()) -> Bool {
        perAddress.admit(address, now: now) && perNumber.admit(number, now: now) && overall.admit("", now: now)
    }
}

/// The host signatures (PROTOCOL.md §5.8) counted in the last `HostCredential.freshnessSeconds`
/// twice over: a signature is fresh for that long either side of the server's clock, so one
/// seen once is refused for as long as it could still be fresh. Only requests of certified keys
/// within their limits enter, so the table grows with real hosts' logins; when it is full
/// nothing more enters, and those requests count as anonymous.
final class HostSignatureReplay: Sendable {
    private let seen = Mutex([[UInt8]: Double]())
    private let capacity: Int

    init(capacity: Int = 100_000) { self.capacity = capacity }

    /// Records `signature`; false when it was seen already or the table is full.
    func firstUse(_ signature: [UInt8], now: Date = Date()) -> Bool {
        let t = now.timeIntervalSince1970
        let keep = Double(2 * HostCredential.freshnessSeconds)
        return seen.withLock { s in
            if let at = s[signature], t - at < keep { return false }
            if s.count >= capacity { s = s.filter { t - $0.value < keep } }
            guard s.count < capacity else { return false }
            s[signature] = t
            return true
        }
    }
}
