#if canImport(Glibc)
import Glibc
#endif

/// Group membership as the system's name service (NSS: files, sssd, winbind, LDAP) sees it,
/// for EnforcementPolicy. A configured group name is resolved to its gid (`getgrnam_r`), the
/// account's groups with `getgrouplist` (its primary group and every group that lists it, as
/// `id` shows them); the account is a member when the gid is among them. Names are never
/// compared as text: `wheel2` is another group with another gid, not `wheel`.
///
/// A failure of the name service is an error, never "not a member": an exemption must not
/// appear and a requirement must not vanish because LDAP was down.
package enum UnixGroups {
    package enum LookupError: Error, Equatable, Sendable, CustomStringConvertible {
        /// `getgrnam_r` failed for this group (its error number): it may exist.
        case group(String, errno: Int32)
        /// `getgrouplist` gave no answer for the account (not even its primary group).
        case groupList(user: String)

        package var description: String {
            switch self {
            case .group(let name, let e): "the name service failed to look up group \(name) (errno \(e))"
            case .groupList(let user): "the name service failed to list the groups of \(user)"
            }
        }
    }

    /// The names among `groups` that `account` is a member of, in the order given. A group the
    /// name service does not know has no members.
    package static func membership(of account: UnixAccount, in groups: [String]) throws(LookupError) -> [String] {
        guard !groups.isEmpty else { return [] }
        let gids = try groupList(of: account)
        var members: [String] = []
        for name in groups {
            guard let gid = try gid(of: name) else { continue }
            if gids.contains(gid) { members.append(name) }
        }
        return members
    }

    /// The gids of `account`'s groups, its primary group first.
    static func groupList(of account: UnixAccount) throws(LookupError) -> [gid_t] {
        var count: Int32 = 64
        for _ in 0..<8 {
            var gids = [gid_t](repeating: 0, count: Int(count))
            var found = count
            let rc = getgrouplist(account.name, account.gid, &gids, &found)
            if rc >= 1 { return Array(gids.prefix(Int(rc))) }
            // -1 with a larger count: the list did not fit; anything else is a failure (a
            // working name service always returns at least the primary group).
            guard rc == -1, found > count, found <= 1 << 16 else { break }
            count = found
        }
        throw .groupList(user: account.name)
    }

    /// The gid of the group named `name`, nil when the name service does not know it.
    static func gid(of name: String) throws(LookupError) -> gid_t? {
        var size = max(Int(sysconf(Int32(_SC_GETGR_R_SIZE_MAX))), 1024)
        while true {
            var entry = group()
            var found: UnsafeMutablePointer<group>? = nil
            var buffer = [CChar](repeating: 0, count: size)
            let rc = getgrnam_r(name, &entry, &buffer, buffer.count, &found)
            if rc == ERANGE, size < 1 << 24 { size *= 4; continue }
            // The name service decides which group a name means (sssd may fold case): the
            // comparison is by gid, so a look-alike name is another group, another gid.
            if let found { return found.pointee.gr_gid }
            // getgrnam_r(3): 0, ENOENT, ESRCH, EBADF or EPERM mean "not found" in practice.
            switch rc {
            case 0, ENOENT, ESRCH, EBADF, EPERM: return nil
            default: throw .group(name, errno: rc)
            }
        }
    }
}
