import Foundation

/// Whether a registration starts active, and what that does to its user, decided once for
/// both backends (`saveRegistration`): they read the user's row, refuse a revoked user, use up
/// a registration code if one was given (which stands for `.auto`), ask `decide`, and write
/// the user as it says before storing the registration.
enum RegistrationPolicy {
    /// The user's row as read: its state and activation code's hash.
    struct User: Sendable, Equatable {
        var state: String
        var activationCodeHash: String?
    }

    /// What to write to the user's row.
    enum UserWrite: Sendable, Equatable {
        case none
        /// A new user, pending.
        case createPending
        /// The user, created or existing, becomes active.
        case upsertActive
        /// The existing user becomes active, its activation code used up.
        case activateUsingCode
    }

    /// How many registrations are kept per identity and per client address (docs/SECURITY.md §5):
    /// each unauthenticated `PUT /rps/user` stores one for `verifyUserExpireSeconds`, so beyond
    /// these the oldest go. The user's own newest registration is never the one dropped by its own
    /// store.
    static let maxPendingPerUser = 10
    static let maxPendingPerSource = 100

    /// Whether a registration is refused, storing nothing, for a wrong activation code: in
    /// `.code` mode a code that is given and is not the user's (docs/SECURITY.md §5). Without a
    /// code the registration waits for `user activate`, as before.
    static func refusesActivationCode(user: User?, mode: VerificationMode, activateCodeHash: String?) -> Bool {
        guard mode == .code, let activateCodeHash else { return false }
        return user?.activationCodeHash != activateCodeHash
    }

    static func decide(user: User?, mode: VerificationMode, activateCodeHash: String?) -> (active: Bool, write: UserWrite) {
        switch mode {
        case .auto:
            return (true, .upsertActive)
        case .link:
            return (false, user == nil ? .createPending : .none)
        case .code:
            if let stored = user?.activationCodeHash, let activateCodeHash, stored == activateCodeHash {
                return (true, .activateUsingCode)
            }
            return (false, user == nil ? .createPending : .none)
        }
    }
}
