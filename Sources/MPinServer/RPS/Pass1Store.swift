import Foundation
#if canImport(Glibc)
import Glibc
#endif
import MPinCrypto
import Synchronization

/// Pass-1 state (U, UT, y) between pass 1 and pass 2: 15 seconds, consumed by the pass 2 it
/// belongs to. Kept in memory: it is worthless after a restart (the client just redoes pass 1)
/// and this saves two database writes per authentication.
///
/// Several logins of one identity may be under way at once (docs/SECURITY.md §6.5: with one slot
/// per identity, the next pass 1 overwrote the state of a login in flight, whose right PIN was
/// then counted as wrong). Each pass 1 gets its own entry and a random id, which mpin-server's
/// clients echo in pass 2 (`pass1Id`); the original SDK echoes nothing, so its pass 2 is
/// checked against each pending entry of its identity from the same address. A pass 2 that
/// finds no entry is refused without being counted. Bounded without authentication, so that
/// one client cannot push out another's state: at most `perIdentity` entries per identity and
/// address (a new one evicts only that address's oldest), `perIdentityTotal` per identity, at
/// most `perSource` per address (beyond it that address is refused, nobody else; IPv6
/// addresses count by their /64, which one host usually holds whole), and `capacity` in all.
final class Pass1Store: Sendable {
    struct Entry: Sendable {
        var id: [UInt8]
        var u: [UInt8]
        var ut: [UInt8]
        var y: [UInt8]
        var source: String
        var expires: Date
    }
    enum SaveOutcome: Equatable { case saved(id: [UInt8]), sourceFull, full }

    private struct State {
        var entries: [[UInt8]: [Entry]] = [:]
        var count = 0
        var perSource: [String: Int] = [:]
        var insertsSincePrune = 0
        var lastPrune = Date.distantPast

        mutating func forget(_ e: Entry) {
            count -= 1
            let left = (perSource[e.source] ?? 1) - 1
            perSource[e.source] = left > 0 ? left : nil
        }

        mutating func prune(now: Date) {
            for (key, list) in entries {
                let live = list.filter { $0.expires > now }
                for e in list where e.expires <= now { forget(e) }
                entries[key] = live.isEmpty ? nil : live
            }
            insertsSincePrune = 0
            lastPrune = now
        }
    }
    private let state = Mutex(State())
    private let capacity: Int
    let perIdentity: Int
    let perIdentityTotal: Int
    let perSource: Int

    init(capacity: Int = 100_000, perIdentity: Int = 8, perIdentityTotal: Int = 64, perSource: Int = 1_000) {
        self.capacity = capacity; self.perIdentity = perIdentity; self.perIdentityTotal = perIdentityTotal
        self.perSource = perSource
    }

    /// The address a pass 1 counts against: an IPv4 address as it is, an IPv6 address by its
    /// first 64 bits (one host usually holds a whole /64, so counting its addresses one by one
    /// would not bound it).
    static func sourceKey(_ address: String) -> String {
        // A byte scan: `String.contains(Character)` walks grapheme clusters, and this runs
        // twice per login.
        var raw = in6_addr()
        guard address.utf8.contains(UInt8(ascii: ":")), inet_pton(AF_INET6, address, &raw) == 1 else { return address }
        let prefix = withUnsafeBytes(of: raw) { Array($0.prefix(8)) }
        return "ipv6/64:" + prefix.map { String($0, radix: 16) }.joined(separator: ".")
    }

    /// Stores a pass 1's state for the identity whose `MPin.hashID` is `key` (computed once
    /// per request by the caller, which needs it for other look-ups too), from `source`;
    /// returns its id, or why not.
    func save(key: [UInt8], u: [UInt8], ut: [UInt8], y: [UInt8], source address: String, expires: Date, now: Date) -> SaveOutcome {
        let source = Self.sourceKey(address)
        guard let id = try? SystemRandom.bytes(16) else { return .full }
        return state.withLock { s in
            s.insertsSincePrune += 1
            // Expired entries go every 1024 saves, and when a bound is reached, at most once a
            // second: a full store must not cost a scan of it per request.
            let atBound = s.count >= capacity || (s.perSource[source] ?? 0) >= perSource
            if s.insertsSincePrune >= 1024 || (atBound && now.timeIntervalSince(s.lastPrune) >= 1) {
                s.prune(now: now)
            }
            guard (s.perSource[source] ?? 0) < perSource else { return .sourceFull }
            var list = s.entries[key] ?? []
            if list.filter({ $0.source == source }).count >= perIdentity, let oldest = list.firstIndex(where: { $0.source == source }) {
                s.forget(list.remove(at: oldest))
            } else if list.count >= perIdentityTotal || s.count >= capacity {
                return .full
            }
            list.append(Entry(id: id, u: u, ut: ut, y: y, source: source, expires: expires))
            s.entries[key] = list
            s.count += 1
            s.perSource[source, default: 0] += 1
            return .saved(id: id)
        }
    }

    /// The live entries a pass 2 of the identity `key` (its `MPin.hashID`) from `address` may
    /// belong to: the one with `id` when the client echoed it, else every pending one from the
    /// same address, newest first. Nothing is removed.
    func candidates(key: [UInt8], id: [UInt8]?, source address: String, now: Date) -> [Entry] {
        let source = Self.sourceKey(address)
        return state.withLock { s in
            let live = (s.entries[key] ?? []).filter { $0.expires > now }
            guard let id else { return live.filter { $0.source == source }.reversed() }
            return live.filter { $0.id == id }
        }
    }

    /// Removes the entry `id` of the identity `key`; false when it is gone (another pass 2 took it).
    func take(key: [UInt8], id: [UInt8]) -> Bool {
        return state.withLock { s in
            guard var list = s.entries[key], let index = list.firstIndex(where: { $0.id == id }) else { return false }
            s.forget(list.remove(at: index))
            s.entries[key] = list.isEmpty ? nil : list
            return true
        }
    }

    /// How many entries are pending (tests and metrics).
    var count: Int { state.withLock { $0.count } }
}
