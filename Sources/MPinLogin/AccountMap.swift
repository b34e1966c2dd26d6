import MPinClient
import MPinCrypto
import MPinJSON
import MPinWire

/// Which M-Pin identity on which backend a Unix user logs in with: the document `accounts`
/// in the store's non-secure storage, `{"unixUser": {"identity": id, "backend": url}}`.
/// mpinctl writes it at registration; the PAM module only reads it.
package struct AccountMap {
    package struct Account: Sendable, Equatable {
        package var identity: String
        package var backend: String
        /// Linked without a token on this host (`mpinctl link`), for `mode = device` logins.
        package var linked: Bool
        /// Which registration of the identity this account trusts: the hex SHA-256 of its mpinId
        /// (`MPinIdentity.fingerprint`), pinned by `mpinctl register` and `mpinctl link`, so that a
        /// device approval by another registration of the same identity (one an attacker
        /// started) is refused. Empty for an account written before pinning existed.
        package var mpinIdHash: String
        /// The backend's verdict-signing public key (hex), pinned when the account was linked:
        /// a device-mode approval counts only with its signature (PROTOCOL.md §4.5.1).
        package var verdictKey: String
        /// The backend answered REVOKED to a login of this identity (Login.run records it), so
        /// that account management (pam_sm_acct_mgmt) refuses it without asking the backend.
        package var revoked: Bool
        /// After a wrong PIN: the wrong PINs the identity may still take, as the backend said
        /// with its signature (MPinUser.attemptsLeft); the next prompt says so, since sudo
        /// shows no message under PAM_SILENT. Cleared by a success; nil when not known.
        package var attemptsLeft: Int?
        /// The backend answered BLOCKED (signed) to the last login of this identity: the next
        /// prompt says so. Cleared by a success after the administrator's unblock.
        package var blocked: Bool
        /// The Unix account's uid when it was registered or linked: a later account of the same
        /// name with another uid does not inherit the registration (`mpinctl doctor` reports it,
        /// the login refuses it). nil for an account written before the uid was kept.
        package var uid: UInt32?
        package init(identity: String, backend: String, linked: Bool = false, mpinIdHash: String = "", verdictKey: String = "",
                    revoked: Bool = false, attemptsLeft: Int? = nil, blocked: Bool = false, uid: UInt32? = nil) {
            self.identity = identity; self.backend = backend; self.linked = linked
            self.mpinIdHash = mpinIdHash; self.verdictKey = verdictKey; self.revoked = revoked
            self.attemptsLeft = attemptsLeft; self.blocked = blocked; self.uid = uid
        }
    }

    package static let document = "accounts"
    let storage: any Storage

    package init(storage: any Storage) { self.storage = storage }

    package func all() throws(StorageError) -> [(unixUser: String, account: Account)] {
        guard let bytes = try storage.read(Self.document), !bytes.isEmpty else { return [] }
        guard case .object(let members)? = try? JSONParser().parse(bytes) else {
            throw StorageError(path: Self.document, reason: .systemError(operation: "parse accounts", errno: 0))
        }
        return members.compactMap { m in
            guard let id = m.value["identity"]?.stringValue, let backend = m.value["backend"]?.stringValue else { return nil }
            return (m.key, Account(identity: id, backend: backend, linked: m.value["linked"]?.boolValue ?? false,
                                   mpinIdHash: m.value["mpinIdHash"]?.stringValue ?? "",
                                   verdictKey: m.value["verdictKey"]?.stringValue ?? "",
                                   revoked: m.value["revoked"]?.boolValue ?? false,
                                   attemptsLeft: m.value["attemptsLeft"]?.int64Value.flatMap { Int(exactly: $0) },
                                   blocked: m.value["blocked"]?.boolValue ?? false,
                                   uid: m.value["uid"]?.int64Value.flatMap { UInt32(exactly: $0) }))
        }
    }

    /// The account registered for `unixUser`, whose name must match byte for byte (not by
    /// Swift's canonical equivalence: `\u{212A}ate` is not `Kate`). The PAM module passes the
    /// account's `pw_name` (UnixAccount), never the name the client typed.
    package func account(for unixUser: String) throws(StorageError) -> Account? {
        try all().first { sameUnixName($0.unixUser, unixUser) }?.account
    }

    package func set(_ account: Account?, for unixUser: String) throws(StorageError) {
        var entries = try all().filter { !sameUnixName($0.unixUser, unixUser) }
        if let account { entries.append((unixUser, account)) }
        let doc = JSONValue.object(entries.map { e -> (key: String, value: JSONValue) in
            var fields: [(key: String, value: JSONValue)] = [("identity", .string(e.account.identity)), ("backend", .string(e.account.backend))]
            if e.account.linked { fields.append((key: "linked", value: .bool(true))) }
            if !e.account.mpinIdHash.isEmpty { fields.append((key: "mpinIdHash", value: .string(e.account.mpinIdHash))) }
            if !e.account.verdictKey.isEmpty { fields.append((key: "verdictKey", value: .string(e.account.verdictKey))) }
            if e.account.revoked { fields.append((key: "revoked", value: .bool(true))) }
            if let left = e.account.attemptsLeft { fields.append((key: "attemptsLeft", value: .number(String(left)))) }
            if e.account.blocked { fields.append((key: "blocked", value: .bool(true))) }
            if let uid = e.account.uid { fields.append((key: "uid", value: .number(String(uid)))) }
            return (key: e.unixUser, value: JSONValue.object(fields))
        })
        let bytes = doc.serialized
        // The old index goes first, and nothing is written unless it went: so an index can
        // never outlive the document it was made from when the write after the document fails
        // (a full disk, a crash). It names that document's size and checksum too, so one left
        // by a concurrent write is not believed either (pam_mpin.so then asks the helper, as
        // it always did).
        try storage.delete(Self.indexDocument)
        try storage.write(Self.document, bytes)
        try? storage.write(Self.indexDocument, Self.index(of: bytes, unixUsers: entries.map(\.unixUser)))
    }

    /// The index of the registered Unix users pam_mpin.so reads (pam/Module/Unregistered.swift)
    /// to answer a user with no registration under `nouserok` without starting the helper.
    package static let indexDocument = "accounts-index"

    /// The index of `document` (the bytes just written as `accounts`): a header naming the
    /// document's size and FNV-1a 64 checksum and the checksum of the lines after it, then each
    /// Unix user's name, as the document
    /// spells it, followed by a newline. A name that itself contains a newline only adds
    /// lines: a line that matches a user makes the module ask the helper, so extra lines can
    /// never let a registered user through.
    package static func index(of document: [UInt8], unixUsers: [String]) -> [UInt8] {
        var names: [UInt8] = []
        for name in unixUsers {
            names += name.utf8
            names.append(UInt8(ascii: "\n"))
        }
        // The names' own checksum too: an index with a line taken out (by hand) is not believed.
        return Array("\(indexHeader)\(document.count) \(hex16(fnv1a64(document))) \(hex16(fnv1a64(names)))\n".utf8) + names
    }

    /// The first line's fixed start; the format's version is part of it.
    package static let indexHeader = "mpin-accounts-index 1 "

    /// FNV-1a, 64 bits: not a defence against whoever can write the store (root), only a check
    /// that the index was made from the document that is there now.
    package static func fnv1a64(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    private static func hex16(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

extension StorageError {
    /// The store refused this process (EACCES, EPERM): a caller that is not root (a screen
    /// locker runs PAM as the user), or a mandatory access control policy. Not a fault of the
    /// store, and not the user's: the PAM module stays out of the way (docs/SECURITY.md §6.6).
    package var isPermissionDenied: Bool {
        if case .systemError(_, let code) = reason { return code == 13 || code == 1 }  // EACCES, EPERM
        return false
    }
}
