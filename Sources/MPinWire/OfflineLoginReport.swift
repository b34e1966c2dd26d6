import MPinCrypto

/// The logins a host let a user make while its backend was unreachable (pam_mpin's offline
/// logins, docs/SECURITY.md "Offline logins"), reported with the user's next online login in
/// the final step's body (`"offlineLogins"`, docs/PROTOCOL.md §4.5.2), so that the backend, the
/// authority over the user, sees them (`mpin-server user show`).
///
/// The report is bound to the login's PIN proof through the verdict nonce: the host draws a
/// random `salt` and sends, as pass 2's `verdictNonce`, SHA-256 of the salt and `boundBytes`.
/// The server puts that nonce into the authOTT, which nobody can change (§4.5.1), records a
/// report only when a host token's login succeeded and the report hashes to that nonce, and
/// signs the count it kept over the nonce; the host forgets its logins only on that signature.
/// A relay that rewrites the report gets nothing recorded and the host sends it again; one that
/// also rewrites the nonce to fit its own report gets the verdict signed over that nonce, which
/// the host refuses: a forged report costs the user a login they see fail (SECURITY.md §4).
package struct OfflineLoginReport: Codable, Sendable, Equatable {
    /// One offline login: when (seconds since 1970, the host's clock), through which PAM
    /// service, how it ended (`outcomes`), and the random `id` (16 hex digits) the host gave it
    /// when it happened: the server keeps each id once, so a report sent again adds nothing and
    /// two logins in one second stay two, in one report or in two.
    package struct Login: Codable, Sendable, Equatable {
        package var time: Int64
        package var service: String
        package var outcome: String
        package var id: String
        package init(time: Int64, service: String, outcome: String, id: String) {
            self.time = time; self.service = service; self.outcome = outcome; self.id = id
        }
    }

    /// The host's name, as it calls itself (not authenticated beyond the binding).
    package var host: String
    /// 32 random bytes, hex, drawn by the host for this login; empty until the SDK draws it.
    package var salt: String
    package var logins: [Login]

    package init(host: String, salt: String = "", logins: [Login]) {
        self.host = host; self.salt = salt; self.logins = logins
    }

    /// The outcomes a host records (pam_mpin's log words).
    package static let outcomes: Set<String> = ["OK", "INCORRECT_PIN"]
    /// At most this many logins in one report (a host keeps the last 50).
    package static let maxLogins = 50
    /// Longest host name (DNS's limit) and PAM service name.
    package static let maxHostBytes = 253
    package static let maxServiceBytes = 64
    package static let saltSize = 32
    /// A login's id: this many random bytes, in lower-case hex.
    package static let idSize = 8

    /// Whether every field is within its bounds: a name of letters, digits, `.`, `_` and `-`
    /// (so no field can run into the next in `boundBytes`), a known outcome, a positive time.
    package var isWellFormed: Bool {
        guard Self.isName(host, maxBytes: Self.maxHostBytes), !logins.isEmpty, logins.count <= Self.maxLogins,
              Hex.decode(salt, length: Self.saltSize) != nil else { return false }
        return logins.allSatisfy { l in
            l.time > 0 && l.time < 1 << 40 && Self.isName(l.service, maxBytes: Self.maxServiceBytes)
                && Self.outcomes.contains(l.outcome) && Self.isID(l.id)
        }
    }

    /// What the nonce binds: a tag, the host, then one line per login, in the report's order.
    package var boundBytes: [UInt8] {
        var text = "mpin-offline-report-v1\nhost \(host)\n"
        for l in logins { text += "login \(l.time) \(l.service) \(l.outcome) \(l.id)\n" }
        return Array(text.utf8)
    }

    /// The verdict nonce that binds this report with `salt` (bytes).
    package func nonce(salt: [UInt8]) -> [UInt8] { SHA256.hash(salt + boundBytes) }

    /// Whether this (well-formed) report is the one `nonce` binds.
    package func isBound(to nonce: [UInt8]?) -> Bool {
        guard let nonce, isWellFormed, let salt = Hex.decode(self.salt, length: Self.saltSize) else { return false }
        return WireSignature.constantTimeEqual(self.nonce(salt: salt), nonce)
    }

    /// `idSize` bytes in lower-case hex.
    package static func isID(_ id: String) -> Bool {
        Hex.decode(id, length: idSize).map(Hex.encode) == id
    }

    /// Letters, digits, `.`, `_`, `-`; 1 to `maxBytes` bytes.
    package static func isName(_ s: String, maxBytes: Int) -> Bool {
        let bytes = s.utf8
        guard !bytes.isEmpty, bytes.count <= maxBytes else { return false }
        return bytes.allSatisfy(isNameByte)
    }

    /// A byte a name may hold: a letter, a digit, `.`, `_` or `-`.
    package static func isNameByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2E || b == 0x5F || b == 0x2D
    }
}
