import Foundation
import MPinCrypto
import MPinWire

/// One user as `mpin-server user list` shows it.
package struct UserSummary: Codable, Sendable, Equatable {
    package var userId: String
    /// `pending`, `active` or `revoked`.
    package var state: String
    /// Identities (mpinIds) whose client secret was issued.
    package var identities: Int
    /// Registrations waiting for their client-secret share.
    package var pendingRegistrations: Int
    /// Highest wrong-PIN count among the user's identities.
    package var failedAttempts: Int
    /// True when one of the identities is blocked.
    package var blocked: Bool
}

/// A registration waiting for its client-secret share, as `mpin-server user pending` shows it:
/// enough for the admin to tell the user's own registration from one somebody else started for
/// the same identity (docs/SECURITY.md §6.2).
package struct PendingRegistration: Codable, Sendable, Equatable {
    /// The registration's fingerprint: hex SHA-256 of its mpinId, as `mpin list --fingerprints`
    /// shows it on the user's device. `user activate --registration` takes it (or a prefix).
    package var fingerprint: String
    /// When it was started and when it expires (seconds since the epoch).
    package var created: Double
    package var expires: Double
    package var deviceName: String
    /// The client address it came from.
    package var source: String
    /// Whether it is active already (waiting only for the client to fetch its share).
    package var active: Bool
    /// The mpinId, lower-case hex (not shown; what the storage activates).
    var mpinID: String

    enum CodingKeys: String, CodingKey { case fingerprint, created, expires, deviceName, source, active }

    init(mpinID: String, created: Double, expires: Double, deviceName: String, source: String, active: Bool) {
        self.mpinID = mpinID
        fingerprint = MPinIdentity.fingerprint(mpinIdHex: mpinID) ?? ""
        self.created = created; self.expires = expires; self.deviceName = deviceName; self.source = source
        self.active = active
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        fingerprint = try c.decode(String.self, forKey: .fingerprint)
        created = try c.decode(Double.self, forKey: .created)
        expires = try c.decode(Double.self, forKey: .expires)
        deviceName = try c.decode(String.self, forKey: .deviceName)
        source = try c.decode(String.self, forKey: .source)
        active = try c.decode(Bool.self, forKey: .active)
        mpinID = ""
    }
}

/// An issued identity of a user, as `mpin-server user identities` shows it: one device's
/// registration, so that the admin unblocks the user's own and not a stolen one
/// (docs/SECURITY.md §6.13: `user unblock` cleared every identity's counter).
package struct IssuedIdentity: Codable, Sendable, Equatable {
    /// Hex SHA-256 of the mpinId, as `mpin list --fingerprints` shows it on the device.
    package var fingerprint: String
    package var created: Double
    package var failedAttempts: Int
    package var blocked: Bool
    var mpinID: String

    enum CodingKeys: String, CodingKey { case fingerprint, created, failedAttempts, blocked }

    init(mpinID: String, created: Double, failedAttempts: Int, maxAttempts: Int) {
        self.mpinID = mpinID
        fingerprint = MPinIdentity.fingerprint(mpinIdHex: mpinID) ?? ""
        self.created = created; self.failedAttempts = failedAttempts; blocked = failedAttempts >= maxAttempts
    }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        fingerprint = try c.decode(String.self, forKey: .fingerprint)
        created = try c.decode(Double.self, forKey: .created)
        failedAttempts = try c.decode(Int.self, forKey: .failedAttempts)
        blocked = try c.decode(Bool.self, forKey: .blocked)
        mpinID = ""
    }
}

/// Everything `mpin-server user show` prints about one user: the summary, the issued
/// identities, the pending registrations and the offline logins hosts reported.
package struct UserDetails: Codable, Sendable, Equatable {
    package var user: UserSummary
    package var identities: [IssuedIdentity]
    package var pendingRegistrations: [PendingRegistration]
    package var offlineLogins: [OfflineLoginEntry]
}

/// Administration failures, shown to the operator.
package enum AdminError: Error, Equatable, Sendable, CustomStringConvertible {
    case noSuchUser(String)
    case randomFailure
    case inviteLifetime(Int)
    /// `user activate` without `--registration` while registrations are pending: which one?
    case registrationNotNamed(String, [PendingRegistration])
    /// `--registration` names no live registration of the user, or more than one.
    case noSuchRegistration(String, String)
    /// `user unblock` without `--identity` while more than one identity is blocked: which one?
    case identityNotNamed(String, Int)
    /// `--identity` names no identity of the user, or more than one.
    case noSuchIdentity(String, String)

    package var description: String {
        switch self {
        case .noSuchUser(let u): return "no such user: \(u)"
        case .randomFailure: return "the random source failed"
        case .inviteLifetime(let s): return "an invitation lives from 60 seconds to 30 days, not \(s) seconds"
        case .registrationNotNamed(let u, let pending):
            return "\(u) has \(pending.count) pending registration(s); activate the user's own with "
                + "--registration FINGERPRINT (the user's device shows it: mpin list --fingerprints). "
                + "See them with: mpin-server user pending \(u)"
        case .noSuchRegistration(let u, let f):
            return "\(u) has no live pending registration whose fingerprint starts with \(f) (or more than one does)"
        case .identityNotNamed(let u, let n):
            return "\(u) has \(n) blocked identities; unblock the user's own with --identity FINGERPRINT "
                + "(the user's device shows it: mpin list --fingerprints). See them with: mpin-server user identities \(u)"
        case .noSuchIdentity(let u, let f):
            return "\(u) has no identity whose fingerprint starts with \(f) (or more than one does)"
        }
    }
}

/// The administrator's operations (`mpin-server user …`), directly on the database (SQLite or
/// PostgreSQL).
package struct Admin: Sendable {
    let storage: any AdminStorage & MFAStorage
    let maxAttempts: Int

    package init(storage: SQLiteStorage, config: ServerConfig) {
        self.storage = storage
        self.maxAttempts = config.maxInvalidLoginAttempts
    }

    package init(database: ServerDatabase, config: ServerConfig) {
        self.storage = database.backend
        self.maxAttempts = config.maxInvalidLoginAttempts
    }

    /// Every user, sorted by id.
    package func list() async throws -> [UserSummary] {
        try await storage.listUsers(maxAttempts: maxAttempts)
    }

    /// Creates the user if needed and issues a fresh one-time activation code (returned once,
    /// stored hashed), which StartRegistration's `activateCode` accepts.
    package func add(userID: String) async throws -> String {
        // 12 decimal digits: easy to type, 40 bits of entropy, single use.
        guard let code = Secrets.randomDigits(12) else { throw AdminError.randomFailure }
        try await storage.addUser(userID: userID, activationCodeHash: Secrets.hash(code), now: Date())
        return code
    }

    /// An invitation for self-enrolment (`mpin-server user invite`; pam_mpin's `enrol`): a
    /// registration code of the MPinMFA flavour (docs/MFA.md §8) for `userID`, live for
    /// `ttlSeconds`, returned once and stored hashed. A registration that presents it is active
    /// at once; wrong codes tried for the user are counted (WrongRegCodeCounter).
    package func invite(userID: String, ttlSeconds: Int) async throws -> String {
        guard (60...Self.maxInviteSeconds).contains(ttlSeconds) else { throw AdminError.inviteLifetime(ttlSeconds) }
        let now = Date()
        for _ in 0..<3 {
            guard let code = Secrets.randomDigits(RPS.regCodeDigits) else { throw AdminError.randomFailure }
            if try await storage.issueRegCode(codeHash: Secrets.hash(code), userID: userID,
                                              expires: now.addingTimeInterval(TimeInterval(ttlSeconds)), now: now) {
                return code
            }
        }
        throw AdminError.randomFailure
    }

    /// The longest an invitation may live: 30 days.
    package static let maxInviteSeconds = 30 * 24 * 3600

    /// The user's pending registrations, oldest first.
    package func pending(userID: String) async throws -> [PendingRegistration] {
        try await storage.pendingRegistrations(userID: userID, now: Date())
    }

    /// Activates the user and, with `registration` (a fingerprint or a prefix of at least 8 hex
    /// digits), that one pending registration. Never all of them: anyone on the network can
    /// start a registration for any identity, so the admin names the user's own
    /// (docs/SECURITY.md §6.2). Without `registration` the user is activated only when nothing is
    /// pending.
    package func activate(userID: String, registration: String? = nil) async throws {
        let pending = try await pending(userID: userID)
        guard let registration else {
            guard pending.isEmpty else { throw AdminError.registrationNotNamed(userID, pending) }
            return try await change(userID, .activate)
        }
        let prefix = registration.lowercased()
        let matches = pending.filter { $0.fingerprint.hasPrefix(prefix) }
        guard prefix.utf8.count >= 8, matches.count == 1, let chosen = matches.first,
              try await storage.activateRegistration(userID: userID, mpinID: chosen.mpinID, now: Date()) else {
            throw AdminError.noSuchRegistration(userID, registration)
        }
    }

    /// Revokes the user: no more time permits (clients see REVOKED) or authentications.
    package func revoke(userID: String) async throws { try await change(userID, .revoke) }

    /// The user's issued identities, oldest first.
    package func identities(userID: String) async throws -> [IssuedIdentity] {
        try await storage.identities(userID: userID).map {
            IssuedIdentity(mpinID: $0.mpinID, created: $0.created, failedAttempts: $0.failedAttempts, maxAttempts: maxAttempts)
        }
    }

    /// One user's summary, identities, pending registrations and reported offline logins.
    package func show(userID: String) async throws -> UserDetails {
        guard let user = try await list().first(where: { $0.userId == userID }) else { throw AdminError.noSuchUser(userID) }
        return UserDetails(user: user, identities: try await identities(userID: userID),
                           pendingRegistrations: try await pending(userID: userID),
                           offlineLogins: try await storage.offlineLogins(userID: userID))
    }

    /// Clears the wrong-PIN counter of one identity: the one `identity` names (a fingerprint or
    /// a prefix of at least 8 hex digits), or, without it, the only blocked one. Never every
    /// identity at once: the blocked one may be a stolen token (docs/SECURITY.md §6.13). The
    /// signing keys' counters are cleared with it.
    package func unblock(userID: String, identity: String? = nil) async throws {
        let all = try await identities(userID: userID)
        let chosen: IssuedIdentity
        if let identity {
            let prefix = identity.lowercased()
            let matches = all.filter { $0.fingerprint.hasPrefix(prefix) }
            guard prefix.utf8.count >= 8, matches.count == 1, let one = matches.first else {
                throw AdminError.noSuchIdentity(userID, identity)
            }
            chosen = one
        } else {
            let blocked = all.filter { $0.failedAttempts > 0 }
            guard blocked.count <= 1 else { throw AdminError.identityNotNamed(userID, blocked.count) }
            guard let one = blocked.first else { return try await change(userID, .unblock) }
            chosen = one
        }
        guard try await storage.unblockIdentity(userID: userID, mpinID: chosen.mpinID) else {
            throw AdminError.noSuchIdentity(userID, identity ?? chosen.fingerprint)
        }
    }

    /// Deletes the user, its identities and registrations.
    package func delete(userID: String) async throws { try await change(userID, .delete) }

    private func change(_ userID: String, _ change: UserChange) async throws {
        if !(try await storage.changeUser(userID: userID, change)) { throw AdminError.noSuchUser(userID) }
    }
}

/// Hashing of values that are only compared (regOTT, codes, OTTs, tokens).
enum Secrets {
    static func hash(_ s: String) -> String { Hex.encode(SHA256.hash(Array(s.utf8))) }

    /// `n` (at most 18) random decimal digits (OTPs, access numbers, activation codes); nil
    /// when the system's random source fails.
    static func randomDigits(_ n: Int) -> String? {
        guard n <= 18, let b = try? SystemRandom.bytes(8) else { return nil }
        var x: UInt64 = 0
        for byte in b { x = x << 8 | UInt64(byte) }
        var m: UInt64 = 1
        for _ in 0..<n { m *= 10 }
        return String(x % m).leftPadded(to: n)
    }

    /// `count` random bytes as base64url without padding (OAuth codes and secrets).
    static func randomBase64URL(_ count: Int) throws(ServerError) -> String {
        guard let b = try? SystemRandom.bytes(count) else { throw ServerError.internal("Random source failed") }
        return Base64URL.encode(b)
    }

    /// Constant-time equality of two hashes (hex strings of equal length).
    static func equal(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var d: UInt8 = 0
        for i in 0..<x.count { d |= x[i] ^ y[i] }
        return d == 0
    }

    /// `count` random bytes as lower-case hex.
    static func randomHex(_ count: Int) throws(ServerError) -> String {
        guard let b = try? SystemRandom.bytes(count) else { throw ServerError.internal("Random source failed") }
        return Hex.encode(b)
    }
}

