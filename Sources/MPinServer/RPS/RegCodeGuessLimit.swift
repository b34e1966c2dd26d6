import Foundation
import Synchronization

/// The bound on guessing registration codes (docs/SECURITY.md §5; docs/MFA.md §8): wrong codes per
/// source (an address, an IPv6 /64: `Pass1Store.sourceKey`) and over every source together,
/// in fixed one-minute windows, in memory (per node). A try is counted before its code is
/// judged and given back when the code was right, so concurrent tries cannot overshoot a
/// limit, and a source at its limit gets 429 without its code being judged at all: a refused
/// try teaches nothing. The overall limit is what a guesser with many addresses meets: ten
/// sources' worth, so at the default 600 wrong codes an hour at most reach the database,
/// against 10^12 values per code.
///
/// The price: while someone spends the overall budget, codes from other sources wait too
/// (429, "try again in a minute"); no code is voided.
final class RegCodeGuessLimit: Sendable {
    enum Admission: Equatable {
        case admitted
        /// `firstRefusal`: the first refusal of this source in its window (to log once).
        case refused(firstRefusal: Bool)
    }

    private struct Window { var start: Double; var count: Int; var refusedOnce = false }
    private struct State { var sources: [String: Window] = [:]; var overall = Window(start: 0, count: 0) }
    private let state = Mutex(State())
    let perSource: Int
    let overall: Int
    private let capacity: Int

    static let defaultPerSource = 10

    init(perSource: Int = RegCodeGuessLimit.defaultPerSource, overall: Int? = nil, capacity: Int = 10_000) {
        self.perSource = perSource
        self.overall = overall ?? perSource.multipliedReportingOverflow(by: 10).partialValue
        self.capacity = capacity
    }

    /// Counts one try from `source`, unless the source or everyone together is at the limit.
    func admit(_ source: String, now: Date = Date()) -> Admission {
        let t = now.timeIntervalSince1970
        return state.withLock { s in
            if t - s.overall.start >= 60 { s.overall = Window(start: t, count: 0) }
            var window = s.sources[source].flatMap { t - $0.start < 60 ? $0 : nil } ?? Window(start: t, count: 0)
            guard window.count < perSource, s.overall.count < overall else {
                let first = !window.refusedOnce
                window.refusedOnce = true
                s.sources[source] = window
                return .refused(firstRefusal: first)
            }
            if s.sources[source] == nil, s.sources.count >= capacity {
                // Full: finished windows go first; still full, the per-source counts start
                // afresh (the overall count, which bounds the rate anyway, stays).
                s.sources = s.sources.filter { t - $0.value.start < 60 }
                if s.sources.count >= capacity { s.sources.removeAll(keepingCapacity: true) }
            }
            window.count += 1
            s.overall.count += 1
            s.sources[source] = window
            return .admitted
        }
    }

    /// Gives back a try whose code was right (or that was never judged), in the same windows.
    func giveBack(_ source: String, now: Date = Date()) {
        let t = now.timeIntervalSince1970
        state.withLock { s in
            if t - s.overall.start < 60, s.overall.count > 0 { s.overall.count -= 1 }
            if var window = s.sources[source], t - window.start < 60, window.count > 0 {
                window.count -= 1
                s.sources[source] = window
            }
        }
    }

    /// Which limit a source met, for the log: "source" or "overall".
    func describe(_ source: String, now: Date = Date()) -> String {
        let t = now.timeIntervalSince1970
        return state.withLock { s in
            if let w = s.sources[source], t - w.start < 60, w.count >= perSource { return "source (\(perSource) a minute)" }
            return "overall (\(overall) a minute)"
        }
    }
}

extension RegistrationOutcome {
    /// Whether the registration was refused for a wrong registration code (a try that stays counted).
    var isWrongRegCode: Bool { if case .regCodeRefused = self { true } else { false } }
}
