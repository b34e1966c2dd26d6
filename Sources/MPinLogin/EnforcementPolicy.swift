/// Who must pass M-Pin and who may be let through without it (pam_mpin(8), OPTIONS): the pam.d line's
/// `nouserok` and `nouserok_root`, and `require_group` / `exempt_group` from the line or
/// mpin.conf. Pure: the helper resolves the account and its groups through the name service
/// (UnixGroups) and asks this type; every answer that lets a user through says why, for the
/// one log line the helper writes.
///
/// The rules, chosen so that no combination fails open by accident (the holes pam_u2f's
/// `nouserok` and duo_unix's `groups` had):
/// - a member of a `require_group` group must pass M-Pin: with no registration the login is
///   refused, whatever `nouserok` says; membership in an exempt group does not change that;
/// - a member of an `exempt_group` group (and of no required one) is skipped (PAM_IGNORE);
/// - anyone else with no registration is refused, unless `nouserok`, which never covers root
///   (uid 0) unless the line also says `nouserok_root`;
/// - a name service that fails is never a skip: the helper answers PAM_AUTHINFO_UNAVAIL.
package struct EnforcementPolicy: Sendable, Equatable {
    package var requireGroups: [String]
    package var exemptGroups: [String]
    package var nouserok: Bool
    package var nouserokRoot: Bool

    package init(requireGroups: [String] = [], exemptGroups: [String] = [], nouserok: Bool = false, nouserokRoot: Bool = false) {
        self.requireGroups = requireGroups
        self.exemptGroups = exemptGroups
        self.nouserok = nouserok
        self.nouserokRoot = nouserokRoot
    }

    /// The policy of a pam.d line: its options and the configuration they loaded.
    package init(options: ModuleOptions, config: LoginConfig) {
        self.init(requireGroups: config.requireGroups, exemptGroups: config.exemptGroups,
                  nouserok: options.nouserok, nouserokRoot: options.nouserokRoot)
    }

    /// Every group the decision depends on; empty when group membership needs no lookup.
    package var groupsToResolve: [String] {
        var names = requireGroups
        for name in exemptGroups where !names.contains(where: { sameUnixName($0, name) }) { names.append(name) }
        return names
    }

    /// Where the user stands before the login: `memberOf` holds the names (as configured) of
    /// the groups in `groupsToResolve` the user belongs to, as UnixGroups found them.
    package enum Standing: Equatable, Sendable {
        /// A member of this required group: M-Pin is mandatory.
        case required(group: String)
        /// A member of this exempt group and of no required one: skipped.
        case exempt(group: String)
        /// Neither: M-Pin if registered; no registration is decided by `nouserok`.
        case ordinary
    }

    package func standing(memberOf: [String]) -> Standing {
        func member(_ group: String) -> Bool { memberOf.contains { sameUnixName($0, group) } }
        if let group = requireGroups.first(where: member) { return .required(group: group) }
        if let group = exemptGroups.first(where: member) { return .exempt(group: group) }
        return .ordinary
    }

    /// What happens to a user the name service does not know, or with no registration.
    package enum Unregistered: Equatable, Sendable {
        /// PAM_IGNORE: `nouserok` lets the next module decide.
        case ignore
        /// PAM_USER_UNKNOWN: no `nouserok` (or root without `nouserok_root`).
        case unknown(reason: String)
        /// PAM_AUTH_ERR: a member of a required group.
        case refuse(reason: String)
    }

    /// A user with no registration (or no Unix account: then `uid` is nil and the standing
    /// is ordinary, since no group can be resolved for a name that does not exist).
    package func unregistered(uid: UInt32?, standing: Standing) -> Unregistered {
        if case .required(let group) = standing {
            return .refuse(reason: "a member of required group \(group) has no registration")
        }
        guard nouserok else { return .unknown(reason: "no registration") }
        if uid == 0 && !nouserokRoot {
            return .unknown(reason: "no registration; nouserok does not cover root without nouserok_root")
        }
        return .ignore
    }

    /// When M-Pin cannot be checked at all for this caller (a caller that is not root in token
    /// mode, a store closed to it): the other modules decide (true), except for a member of a
    /// required group, who is refused (false).
    package func mayStepAside(standing: Standing) -> Bool {
        if case .required = standing { return false }
        return true
    }

    /// The group names of `text` (`GROUP[,GROUP]`, the value of `key`), in order, or why it is
    /// not such a list: each name non-empty, without spaces, colons or control characters.
    package static func parseGroups(_ text: String, key: String) -> (groups: [String], problem: String?) {
        let names = text.split(separator: ",", omittingEmptySubsequences: false).map { String($0.trimmingSpaces) }
        for name in names {
            if name.isEmpty { return ([], "\(key) must be one or more group names separated by commas") }
            if name.unicodeScalars.contains(where: { $0.value <= 0x20 || $0 == ":" || (0x7F...0x9F).contains($0.value) }) {
                return ([], "\(key): \"\(name)\" is not a group name (no spaces, colons or control characters)")
            }
        }
        return (names, nil)
    }
}
