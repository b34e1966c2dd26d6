import MPinWire

/// The settings of the PAM module and mpinctl: /etc/mpin/mpin.conf, overridden by module
/// arguments or command-line options.
package struct LoginConfig: Sendable, Equatable {
    package static let defaultPath = "/etc/mpin/mpin.conf"

    /// Backend URL (http or https), e.g. `https://mpin.example.org`: the first of `backends`,
    /// where new registrations go.
    package var backend = ""
    /// Every node of the backend, in the order logins try them (`backend = URL, URL, ...`).
    package var backends: [String] = []
    /// What a node that has not answered yet may cost a login, in seconds (`connect_timeout`).
    package var connectTimeout: Double = 2
    package var rpsPrefix = "rps"
    /// The root-owned store of tokens and registrations.
    package var store = "/var/lib/mpin"
    /// The budget for one whole authentication, in seconds.
    package var timeout: Double = 10
    /// CA bundle file and directory for TLS verification (system defaults when empty).
    package var caFile = ""
    package var caPath = ""
    /// When set, only https URLs in these domains are contacted.
    package var trustedDomains: [String] = []
    package var prompt = "M-Pin PIN: "
    /// How the PAM module authenticates: with a token in the store and a PIN typed here
    /// (`token`), by an approval from the user's own device (`device`, DeviceLogin), or each
    /// user as their registration says (`auto`, the default: a token here, or a link).
    package var mode: LoginMode = .auto
    /// In `device` mode, how long to wait for the approval, in seconds.
    package var deviceTimeout: Double = 60
    /// How many digits a PIN has (`pin_length`, 4 to 8): enforced at registration, and what a
    /// PAM_AUTHTOK must look like to be tried as the PIN (PINFormat).
    package var pinLength = PINFormat.defaultLength
    /// Self-enrolment (`enrol = yes`): a Unix user with no registration is asked for the code
    /// `mpin-server user invite` printed and a new PIN, and registered in the store (Enrolment).
    package var enrol = false
    /// The identity a self-enrolling Unix user registers (`enrol_identity`): `%u` stands for the
    /// Unix user name, e.g. `%u@example.org`.
    package var enrolIdentity = "%u"
    /// The key `mpin-server verdict-key` prints (`verdict_key`, 130 hex digits): a
    /// self-enrolment registers only with a backend that announces it. Needed unless every
    /// backend node is https with `cacert` or `capath`.
    package var verdictKey = ""
    /// Members of these groups must pass M-Pin, registered or not (`require_group`;
    /// EnforcementPolicy).
    package var requireGroups: [String] = []
    /// Members of these groups, unless also of a required one, are skipped (`exempt_group`).
    package var exemptGroups: [String] = []
    /// Offline logins (`offline = yes`): while every backend node is unreachable, a PIN is
    /// checked by the host's TPM against what the user's last online login sealed there
    /// (OfflineLogins; docs/SECURITY.md, "Offline logins").
    package var offline = false
    /// How long after the user's last online success on this host an offline login is still
    /// allowed, in seconds (`offline_max_age`, default 7 days): what bounds a revoked user's
    /// offline logins.
    package var offlineMaxAge: Int64 = 7 * 86_400
    /// Wrong offline PINs after which offline logins stop until the next online success
    /// (`offline_attempts`).
    package var offlineAttempts = 3
    /// The TPM's TCTI configuration (`tpm`): tpm2-tss's `device:PATH`, `swtpm:host=H,port=N`, ...
    package var tpm = "device:/dev/tpmrm0"

    package init() {}

    /// The keys the file may contain, each with the setter that validates its value.
    static let keys: [String: @Sendable (inout LoginConfig, String) -> String?] = [
        "backend": { c, v in
            let nodes = v.split(separator: ",").map { String($0.trimmingSpaces) }
            guard !nodes.isEmpty, nodes.allSatisfy({ $0.hasPrefix("https://") || $0.hasPrefix("http://") }) else {
                return "backend must be an http:// or https:// URL, or several separated by commas"
            }
            c.backends = nodes
            c.backend = nodes[0]; return nil
        },
        "connect_timeout": { c, v in
            guard let t = Double(v), t > 0, t <= 60 else { return "connect_timeout must be a number of seconds in (0, 60]" }
            c.connectTimeout = t; return nil
        },
        "rps_prefix": { c, v in c.rpsPrefix = v; return nil },
        "store": { c, v in
            guard v.hasPrefix("/") else { return "store must be an absolute path" }
            c.store = v; return nil
        },
        "timeout": { c, v in
            guard let t = Double(v), t > 0, t <= 300 else { return "timeout must be a number of seconds in (0, 300]" }
            c.timeout = t; return nil
        },
        "cacert": { c, v in
            guard v.hasPrefix("/") else { return "cacert must be an absolute path" }
            c.caFile = v; return nil
        },
        "capath": { c, v in
            guard v.hasPrefix("/") else { return "capath must be an absolute path" }
            c.caPath = v; return nil
        },
        "trusted_domains": { c, v in
            c.trustedDomains = v.split(separator: ",").map { String($0.trimmingSpaces) }.filter { !$0.isEmpty }; return nil
        },
        "mode": { c, v in
            guard let m = LoginMode(rawValue: v) else { return "mode must be auto, token or device" }
            c.mode = m; return nil
        },
        "device_timeout": { c, v in
            guard let t = Double(v), t > 0, t <= 600 else { return "device_timeout must be a number of seconds in (0, 600]" }
            c.deviceTimeout = t; return nil
        },
        "prompt": { c, v in
            guard !v.isEmpty, v.count <= 80 else { return "prompt must be 1 to 80 characters" }
            c.prompt = v.hasSuffix(":") ? v + " " : v; return nil
        },
        "pin_length": { c, v in
            guard let n = Int(v), PINFormat.allowedLengths.contains(n) else {
                return "pin_length must be a number of digits from \(PINFormat.allowedLengths.lowerBound) to \(PINFormat.allowedLengths.upperBound)"
            }
            c.pinLength = n; return nil
        },
        "enrol": { c, v in
            switch v {
            case "yes": c.enrol = true
            case "no": c.enrol = false
            default: return "enrol must be yes or no"
            }
            return nil
        },
        "enrol_identity": { c, v in
            let b = Array(v.utf8)
            let namesUser = b.indices.dropLast().contains { b[$0] == UInt8(ascii: "%") && b[$0 + 1] == UInt8(ascii: "u") }
            guard namesUser, b.count <= 200, !v.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                return "enrol_identity must contain %u (the Unix user name), e.g. %u@example.org"
            }
            c.enrolIdentity = v; return nil
        },
        "verdict_key": { c, v in
            guard LoginConfig.isVerdictKeyForm(v) else { return "verdict_key must be the 130 hex digits `mpin-server verdict-key` prints" }
            c.verdictKey = v.lowercased(); return nil
        },
        "require_group": { c, v in
            let (groups, problem) = EnforcementPolicy.parseGroups(v, key: "require_group")
            c.requireGroups = groups; return problem
        },
        "exempt_group": { c, v in
            let (groups, problem) = EnforcementPolicy.parseGroups(v, key: "exempt_group")
            c.exemptGroups = groups; return problem
        },
        "offline": { c, v in
            switch v {
            case "yes": c.offline = true
            case "no": c.offline = false
            default: return "offline must be yes or no"
            }
            return nil
        },
        "offline_max_age": { c, v in
            guard let seconds = LoginConfig.duration(v), seconds > 0, seconds <= 366 * 86_400 else {
                return "offline_max_age must be a duration up to 366 days: seconds, or a number with s, m, h or d (7d)"
            }
            c.offlineMaxAge = seconds; return nil
        },
        "offline_attempts": { c, v in
            guard let n = Int(v), (1...100).contains(n) else { return "offline_attempts must be a number from 1 to 100" }
            c.offlineAttempts = n; return nil
        },
        "tpm": { c, v in
            // A TCTI configuration string: `name` or `name:conf`, printable, no spaces.
            guard !v.isEmpty, v.utf8.count <= 200, v.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
                return "tpm must be a TCTI configuration such as device:/dev/tpmrm0 or swtpm:host=127.0.0.1,port=2321"
            }
            c.tpm = v; return nil
        },
    ]

    /// The nodes a login of an identity registered at `registered` tries, in order: that one
    /// first, then, if it is one of the configured nodes, the others (they share the
    /// registrations). A registration elsewhere is tried alone.
    package func nodes(for registered: String) -> [String] {
        func same(_ a: String, _ b: String) -> Bool { a.trimmingTrailingSlashes == b.trimmingTrailingSlashes }
        guard backends.contains(where: { same($0, registered) }) else { return [registered] }
        return [registered] + backends.filter { !same($0, registered) }
    }

    /// Why a login whose verdict will not be signed (a registration made with a backend that
    /// does not sign, such as a Milagro RPS, or before keys were pinned) cannot go through
    /// `urls`, or nil when it can: then the host believes the verdict only because TLS told it
    /// who answered, so every node must be https with the CA named here (`cacert` or
    /// `capath`), not the system's store, which any public CA can satisfy (docs/SECURITY.md §6.1).
    package func unsignedVerdictRefusal(for urls: [String]) -> String? {
        guard urls.allSatisfy(authenticatesByTLS) else {
            return "the registration pins no verdict key, so a login needs an https backend and cacert or capath "
                + "in mpin.conf (or register the user again with a backend that signs its verdicts)"
        }
        return nil
    }

    /// The form of a verdict key in this file: `04` and 128 hex digits (an uncompressed G1
    /// point), checked byte for byte as pam_mpin.so checks it when it reads the file itself
    /// (pam/Module/Unregistered.swift). Whether it is a point on the curve is checked where it
    /// is used: register, link and enrolment refuse a key that is not (Verdict.isPublicKey).
    package static func isVerdictKeyForm(_ v: String) -> Bool {
        v.utf8.count == 130 && v.hasPrefix("04") && Hex.decode(v) != nil
    }

    /// Whether TLS tells the host who answers at `url`: https, verified against the CA named
    /// here (`cacert` or `capath`). Anything else (plain http, or https against the system's
    /// store) is believed only where a signature with a pinned key vouches for it.
    package func authenticatesByTLS(_ url: String) -> Bool {
        (!caFile.isEmpty || !caPath.isEmpty) && url.hasPrefix("https://")
    }

    /// Seconds in `text`: a number, or a number followed by s, m, h or d.
    static func duration(_ text: String) -> Int64? {
        guard let last = text.last else { return nil }
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        let (digits, unit) = units[last].map { (text.dropLast(), $0) } ?? (text[...], 1)
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int64(digits), n <= 1_000_000_000 else { return nil }
        return n * unit
    }

    /// Sets `key` from text, as the file or a module argument gives it; the error says why not.
    package mutating func set(_ key: String, _ value: String) -> String? {
        guard let setter = Self.keys[key] else { return "unknown key \"\(key)\"" }
        return setter(&self, value)
    }

    /// Parses the text of a config file strictly: `key = value` lines, `#` comments, blank
    /// lines; unknown keys, repeated keys and bad values are errors naming file:line.
    package static func parse(_ text: String, file: String) throws(ConfigError) -> LoginConfig {
        var config = LoginConfig()
        var seen: Set<String> = []
        // Bytes, not Characters: a documented config is mostly comments, and grapheme breaking
        // them cost a PAM login about 0.4 ms.
        for (index, rawLine) in text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
            let line = Self.trimmed(rawLine)
            if line.isEmpty || line.first == UInt8(ascii: "#") { continue }
            guard let eq = line.firstIndex(of: UInt8(ascii: "=")) else {
                throw ConfigError(file: file, line: index + 1, message: "expected key = value")
            }
            let key = String(decoding: Self.trimmed(line[..<eq]), as: UTF8.self)
            let value = String(decoding: Self.trimmed(line[line.index(after: eq)...]), as: UTF8.self)
            guard !seen.contains(key) else { throw ConfigError(file: file, line: index + 1, message: "\"\(key)\" is set twice") }
            seen.insert(key)
            if let problem = config.set(key, value) { throw ConfigError(file: file, line: index + 1, message: problem) }
        }
        return config
    }

    /// Without leading and trailing spaces, tabs and carriage returns.
    private static func trimmed(_ bytes: Substring.UTF8View.SubSequence) -> Substring.UTF8View.SubSequence {
        var s = bytes
        while let f = s.first, f == 32 || f == 9 || f == 13 { s = s.dropFirst() }
        while let l = s.last, l == 32 || l == 9 || l == 13 { s = s.dropLast() }
        return s
    }

}

/// How the PAM module authenticates (the `mode` key).
package enum LoginMode: String, Sendable, Equatable {
    /// A token in the host's store, unlocked by the PIN typed at the login (Login).
    case token
    /// An access number approved, with the PIN, on the user's own device (DeviceLogin).
    case device
    /// `device` for a user the store links (`mpinctl link`), `token` for everyone else: a
    /// user with a token here is never kept waiting for an approval they cannot give.
    case auto

    /// The mode of one login: `auto` resolved for a user the store does (`linked`) or does not link.
    package func resolved(linked: Bool) -> LoginMode {
        self == .auto ? (linked ? .device : .token) : self
    }
}

/// A configuration problem, with its place when it comes from a file.
package struct ConfigError: Error, Equatable, CustomStringConvertible {
    package let file: String
    package let line: Int
    package let message: String

    package init(file: String, line: Int, message: String) { self.file = file; self.line = line; self.message = message }

    package var description: String {
        if file.isEmpty { return message }
        return line > 0 ? "\(file):\(line): \(message)" : "\(file): \(message)"
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces, tabs and carriage returns.
    var trimmingSpaces: SubSequence {
        var s = self[...]
        while let f = s.first, f == " " || f == "\t" || f == "\r" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\r" { s = s.dropLast() }
        return s
    }
}

extension String {
    /// Without trailing `/`: `http://a/` and `http://a` name the same node.
    var trimmingTrailingSlashes: Substring {
        var s = self[...]
        while s.last == "/" { s = s.dropLast() }
        return s
    }
}
