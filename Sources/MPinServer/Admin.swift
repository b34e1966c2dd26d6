import Foundation
import MPinCrypto
import MPinWire

/// One user as `mpin-server user list` shows it.
public struct UserSummary: Codable, Sendable, Equatable {
    public var userId: String
    /// `pending`, `active` or `revoked`.
    public var state: String
    /// Identities (mpinIds) whose client secret was issued.
    public var identities: Int
    /// Registrations waiting for their client-secret share.
    public var pendingRegistrations: Int
    /// Highest wrong-PIN count among the user's identities.
    public var failedAttempts: Int
    /// True when one of the identities is blocked.
    public var blocked: Bool
}

/// Administration failures, shown to the operator.
public enum AdminError: Error, Equatable, Sendable, CustomStringConvertible {
    case noSuchUser(String)
    case randomFailure

    public var description: String {
        switch self {
        case .noSuchUser(let u): return "no such user: \(u)"
        case .randomFailure: return "the random source failed"
        }
    }
}

/// The administrator's operations (`mpin-server user …`), directly on the database (SQLite or
/// PostgreSQL).
public struct Admin: Sendable {
    let storage: any AdminStorage
    let maxAttempts: Int

    public init(storage: SQLiteStorage, config: ServerConfig) {
        self.storage = storage
        self.maxAttempts = config.maxInvalidLoginAttempts
    }

    public init(database: ServerDatabase, config: ServerConfig) {
        self.storage = database.backend
        self.maxAttempts = config.maxInvalidLoginAttempts
    }

    /// Every user, sorted by id.
    public func list() async throws -> [UserSummary] {
        try await storage.listUsers(maxAttempts: maxAttempts)
    }

    /// Creates the user if needed and issues a fresh one-time activation code (returned once,
    /// stored hashed), which StartRegistration's `activateCode` accepts.
    public func add(userID: String) async throws -> String {
        // 12 decimal digits: easy to type, 40 bits of entropy, single use.
        guard let code = Secrets.randomDigits(12) else { throw AdminError.randomFailure }
        try await storage.addUser(userID: userID, activationCodeHash: Secrets.hash(code), now: Date())
        return code
    }

    /// Marks the user active and activates its pending registrations.
    public func activate(userID: String) async throws { try await change(userID, .activate) }

    /// Revokes the user: no more time permits (clients see REVOKED) or authentications.
    public func revoke(userID: String) async throws { try await change(userID, .revoke) }

    /// Clears the wrong-PIN counters of all the user's identities.
    public func unblock(userID: String) async throws { try await change(userID, .unblock) }

    /// Deletes the user, its identities and registrations.
    public func delete(userID: String) async throws { try await change(userID, .delete) }

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

