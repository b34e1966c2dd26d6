#if canImport(Glibc)
import Glibc
#endif

/// The Unix account a login name stands for, as the system's name service (NSS: files, sssd,
/// winbind, LDAP) resolves it (docs/SECURITY.md §6.4). The name a PAM application passes is
/// whatever the client typed: a case-insensitive name service maps `ALICE` to `alice`, and
/// nothing makes it valid UTF-8. Registrations are keyed by the account's own name, `pw_name`,
/// byte for byte, so that a login finds the registration of the account it will open, and no
/// other.
package struct UnixAccount: Sendable, Equatable {
    /// `pw_name`: the account's name as the name service spells it.
    package let name: String
    package let uid: UInt32
    /// `pw_gid`, the primary group (UnixGroups: getgrouplist starts from it).
    package let gid: UInt32

    package init(name: String, uid: UInt32, gid: UInt32) { self.name = name; self.uid = uid; self.gid = gid }

    package enum LookupError: Error, Equatable, Sendable, CustomStringConvertible {
        /// The name is not valid UTF-8 (or contains a NUL byte): refused, never decoded lossily.
        case notUTF8
        /// The name service does not know the name.
        case unknown
        /// The name service failed (`getpwnam_r`'s error number): it may know the name.
        case nameService(errno: Int32)
        /// The name service returned a `pw_name` that is not valid UTF-8.
        case accountNameNotUTF8

        package var description: String {
            switch self {
            case .notUTF8: "the user name is not valid UTF-8"
            case .unknown: "no such Unix account"
            case .nameService(let e): "the name service failed (errno \(e))"
            case .accountNameNotUTF8: "the account's name is not valid UTF-8"
            }
        }
    }

    /// The account named by `bytes` (PAM_USER as it came, no terminator), from `getpwnam_r`.
    package static func lookup(bytes: [UInt8]) throws(LookupError) -> UnixAccount {
        guard !bytes.isEmpty, !bytes.contains(0), let name = validUTF8(bytes) else { throw .notUTF8 }
        return try lookup(validated: name)
    }

    /// The account named `name`.
    package static func lookup(_ name: String) throws(LookupError) -> UnixAccount {
        guard !name.isEmpty, !name.utf8.contains(0) else { throw .notUTF8 }
        return try lookup(validated: name)
    }

    private static func lookup(validated name: String) throws(LookupError) -> UnixAccount {
        var size = max(Int(sysconf(Int32(_SC_GETPW_R_SIZE_MAX))), 1024)
        while true {
            var entry = passwd()
            var found: UnsafeMutablePointer<passwd>? = nil
            var buffer = [CChar](repeating: 0, count: size)
            let rc = getpwnam_r(name, &entry, &buffer, buffer.count, &found)
            if rc == ERANGE, size < 1 << 20 { size *= 4; continue }
            if let found {
                guard let pwName = found.pointee.pw_name else { throw .accountNameNotUTF8 }
                let nameBytes = Array(UnsafeBufferPointer(start: UnsafeRawPointer(pwName).assumingMemoryBound(to: UInt8.self),
                                                          count: strlen(pwName)))
                guard let canonical = validUTF8(nameBytes), !nameBytes.isEmpty else { throw .accountNameNotUTF8 }
                return UnixAccount(name: canonical, uid: found.pointee.pw_uid, gid: found.pointee.pw_gid)
            }
            // getpwnam_r(3): 0, ENOENT, ESRCH, EBADF or EPERM mean "not found" in practice.
            switch rc {
            case 0, ENOENT, ESRCH, EBADF, EPERM: throw .unknown
            default: throw .nameService(errno: rc)
            }
        }
    }

    /// `bytes` as a String when they are valid UTF-8, else nil (no replacement characters).
    package static func validUTF8(_ bytes: some Collection<UInt8>) -> String? {
        String(validating: bytes, as: UTF8.self)
    }
}

/// Whether two Unix user names are the same name: byte for byte. Swift's `==` on String
/// compares canonical equivalence, under which `\u{212A}ate` (KELVIN SIGN) equals `Kate`, and
/// `é` written as e + U+0301 equals the precomposed one; account names are bytes to the system.
package func sameUnixName(_ a: String, _ b: String) -> Bool {
    a.utf8.elementsEqual(b.utf8)
}
