#if canImport(Glibc)
internal import Glibc
#endif

/// A point on the system's monotonic clock (`CLOCK_MONOTONIC`), for login budgets and
/// elapsed times.
///
/// The client-side modules do not import `_Concurrency`, where `ContinuousClock` lives: linked
/// statically into pam_mpin.so, that module brings libdispatch and the task runtime with it
/// (about 300 KB mapped by every sshd connection) for nothing but reading this clock.
package struct MonotonicInstant: Comparable, Sendable {
    /// Nanoseconds since an arbitrary fixed point (boot, on Linux).
    let nanoseconds: Int64

    /// The current time.
    package static var now: MonotonicInstant {
        var t = timespec()
        // CLOCK_MONOTONIC cannot fail with a valid pointer; a failure would leave t at zero,
        // which makes deadlines already passed rather than endless.
        _ = clock_gettime(CLOCK_MONOTONIC, &t)
        return MonotonicInstant(nanoseconds: Int64(t.tv_sec) &* 1_000_000_000 &+ Int64(t.tv_nsec))
    }

    package static func < (a: MonotonicInstant, b: MonotonicInstant) -> Bool { a.nanoseconds < b.nanoseconds }

    /// The instant `d` later (saturating, so a huge budget cannot wrap around into the past).
    package static func + (a: MonotonicInstant, d: Duration) -> MonotonicInstant {
        let (s, atto) = d.components
        let (ns, overflow) = s.multipliedReportingOverflow(by: 1_000_000_000)
        let delta = overflow ? (s < 0 ? Int64.min : Int64.max) : ns.addingReportingOverflow(atto / 1_000_000_000).partialValue
        let (sum, wrapped) = a.nanoseconds.addingReportingOverflow(delta)
        return MonotonicInstant(nanoseconds: wrapped ? (delta < 0 ? Int64.min : Int64.max) : sum)
    }

    /// The time from `b` to `a` (negative when `a` is earlier).
    package static func - (a: MonotonicInstant, b: MonotonicInstant) -> Duration {
        .nanoseconds(a.nanoseconds &- b.nanoseconds)
    }
}

/// The wall clock (`CLOCK_REALTIME`), for what a server compares with its own clock (a host's
/// signed request for an access number, PROTOCOL.md §5.8).
package enum WallClock {
    /// Milliseconds since the epoch.
    package static func nowMillis() -> Int {
        var t = timespec()
        _ = clock_gettime(CLOCK_REALTIME, &t)
        return Int(t.tv_sec) &* 1000 &+ Int(t.tv_nsec) / 1_000_000
    }
}
