/// What a user's state allows, one meaning for every decision of both backends: an identity
/// acts (time permits, logins, its client-secret share) only while its user exists and is not
/// revoked; a revoked user registers nothing until `user add` makes it pending again.
enum UserStatePolicy {
    /// `state` as read (nil: no such user).
    static func mayAct(_ state: String?) -> Bool { state != nil && state != "revoked" }

    /// Whether a user in `state` (nil: none yet) may start a registration.
    static func mayRegister(_ state: String?) -> Bool { state != "revoked" }

    /// Whether an identity of a user in `state` gets time permits.
    static func permit(_ state: String?) -> PermitOutcome { mayAct(state) ? .allowed : .revoked }
}
