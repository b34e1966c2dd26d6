package import Foundation

/// The administrator's operations (`mpin-server user …` and `app …`) on the database. Same
/// contract as `ServerStorage`: every method is one transaction, secrets arrive as hashes.
package protocol AdminStorage: Sendable {
    /// Every user, sorted by id; `maxAttempts` decides `blocked`.
    func listUsers(maxAttempts: Int) async throws -> [UserSummary]
    /// Creates the user (pending) with this activation-code hash, or gives an existing user the
    /// new code (a revoked user becomes pending again).
    func addUser(userID: String, activationCodeHash: String, now: Date) async throws
    /// Applies `change` to the user; false when there is no such user.
    func changeUser(userID: String, _ change: UserChange) async throws -> Bool
    /// The user's live registrations that wait for their client-secret share, oldest first.
    func pendingRegistrations(userID: String, now: Date) async throws -> [PendingRegistration]
    /// Activates the user and that one live registration of theirs (`mpinID`, lower-case hex);
    /// false when the user has no such live registration.
    func activateRegistration(userID: String, mpinID: String, now: Date) async throws -> Bool
    /// The user's issued identities (their mpinIds, wrong-PIN counts), oldest first.
    func identities(userID: String) async throws -> [IssuedIdentity]
    /// Clears the wrong-PIN counter of that one identity of the user; false when there is none.
    func unblockIdentity(userID: String, mpinID: String) async throws -> Bool
    /// The offline logins hosts reported for the user, newest first.
    func offlineLogins(userID: String) async throws -> [OfflineLoginEntry]
    /// Stores a new application (its secret only as a hash).
    func addApp(clientID: String, name: String, redirectURI: String, logoURL: String, secretHash: String,
                idTokenAlg: String, now: Date) async throws
    /// Every application, oldest first.
    func listApps() async throws -> [AppSummary]
    /// Deletes the application with its live sessions and unused codes; false when there is none.
    func deleteApp(clientID: String) async throws -> Bool
}

/// What `mpin-server user activate|revoke|unblock|delete` does to a user.
package enum UserChange: Sendable, Equatable {
    /// The user becomes active; its pending registrations do not (each is activated by name:
    /// `activateRegistration`, docs/SECURITY.md §6.2).
    case activate
    /// No more time permits or authentications; pending registrations are dropped.
    case revoke
    /// The wrong-PIN counters of every identity of the user are cleared.
    case unblock
    /// The user, its identities, registrations and sessions are deleted.
    case delete
}
