/// The MFA session's state machine where both backends decide on it (docs/MFA.md §5.3).
enum MFASessionPolicy {
    /// What the browser's poll of a session in `state` sees, and whether this poll hands out
    /// the redirect (the session then becomes `done` and forgets the URL: once only).
    static func poll(state: String, redirectURL: String?) -> (poll: SessionPoll, handsOut: Bool) {
        switch state {
        case "authenticated": return (.authenticated(redirectURL: redirectURL ?? ""), true)
        case "done": return (.done, false)
        case "aborted": return (.refused, false)
        default: return (.pending, false)
        }
    }
}
