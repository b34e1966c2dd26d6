/// Wire messages of access-number login from a device (PROTOCOL.md §5.7, **[here]**): the
/// requester describes itself when it asks for an access number, and the approving device reads
/// that description back before it asks for the PIN.

/// `POST /{p}/getAccessNumber` body: optional; a browser sends none.
package struct AccessNumberRequest: Codable, Sendable, Equatable {
    /// What asks for the login, e.g. `"host db1, user alice, service sshd"`.
    package var description: String?
    /// A fresh 32-byte nonce (hex) from a requester that wants the approval's verdict signed
    /// (PROTOCOL.md §4.5.1): the server binds it to this access number (inside the webOTT).
    package var verdictNonce: String?
    /// The host's credential (PROTOCOL.md §5.8, `HostCredential`): its public key (hex), the
    /// time of the request (ms since the epoch), the local user the login is for, its signature
    /// over them, the description and the nonce, and the certificate the server gave the key.
    /// Without them, or when they do not verify, the request counts against the anonymous limits.
    package var hostKey: String?
    package var hostTime: Int?
    package var hostUser: String?
    package var hostSignature: String?
    package var hostCertificate: String?
    package init(description: String? = nil, verdictNonce: String? = nil) {
        self.description = description; self.verdictNonce = verdictNonce
    }
}

/// `GET /{p}/accessnumber/{accessNumber}` 200 response: the login a live, unused access number
/// belongs to.
package struct AccessNumberDetailsResponse: Codable, Sendable, Equatable {
    package var accessNumber: String
    /// The requester's description; empty when it gave none.
    package var description: String
    /// Seconds left before the access number expires.
    package var ttlSeconds: Int
    package init(accessNumber: String, description: String, ttlSeconds: Int) {
        self.accessNumber = accessNumber; self.description = description; self.ttlSeconds = ttlSeconds
    }
}

/// The rules for an access number's description, shared by the server (which refuses what
/// breaks them with 400) and the requester (which builds a description that keeps them).
package enum AccessNumberDescription {
    /// Longest description, in Unicode scalars.
    package static let maxScalars = 128

    /// Whether the scalar may appear in a description: no C0 or C1 control character, no
    /// DEL, no line or paragraph separator, and no bidirectional formatting character (which
    /// could make the text read differently from what it is).
    package static func allows(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F, 0x2028, 0x2029, 0x200E, 0x200F, 0x061C, 0x202A...0x202E, 0x2066...0x2069: false
        default: true
        }
    }

    /// Whether `text` is an acceptable description.
    package static func isValid(_ text: String) -> Bool {
        var count = 0
        for s in text.unicodeScalars {
            count += 1
            guard count <= maxScalars, allows(s) else { return false }
        }
        return true
    }

    /// `text` made acceptable: refused scalars become `?` and the end is cut.
    package static func sanitized(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        for s in text.unicodeScalars.prefix(maxScalars) { out.append(allows(s) ? s : "?") }
        return String(out)
    }
}
