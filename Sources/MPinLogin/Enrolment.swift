import MPinClient
import MPinCrypto
import MPinJSON
import MPinWire

/// Self-enrolment at the first login (`enrol = yes`, pam_mpin(8), OPTIONS): a Unix user with no
/// registration types the registration code an administrator made with `mpin-server user
/// invite IDENTITY` and a new PIN, and is registered in the root-owned store, as `mpinctl
/// register` would do it with the administrator at their side. The code is the MPinMFA
/// flavour's registration code (docs/MFA.md §8): the server makes the registration active at
/// once, only for the identity the code was issued to, and counts wrong codes.
///
/// Which server is believed is decided before anything is asked: the one that announces
/// `verdict_key`, or, without one, only https nodes verified with `cacert`/`capath`. A
/// registration pins the key the server announced, so every later login believes only it.
package struct Enrolment {
    /// What happened; the PAM module maps each to a PAM return code.
    package enum Outcome: Equatable, Sendable {
        case registered
        /// The code is wrong, expired, used, or was issued to another identity.
        case codeRefused
        /// No code or no PIN was entered, or the two PINs differ.
        case canceled
        /// The PIN is not `pin_length` digits.
        case pinFormat
        /// Not allowed by the configuration (no backend, no way to know the server); says why.
        case notAllowed(String)
        /// The backend could not be reached, or TLS failed.
        case unavailable(String)
        /// Anything else the backend or the store reported.
        case failed(String)

        package var name: String {
            switch self {
            case .registered: "ENROLLED"
            case .codeRefused: "CODE_REFUSED"
            case .canceled: "CANCELED"
            case .pinFormat: "PIN_FORMAT"
            case .notAllowed: "NOT_ALLOWED"
            case .unavailable: "UNAVAILABLE"
            case .failed: "FAILED"
            }
        }
    }

    /// Digits of a registration code (mpin-server's `RPS.regCodeDigits`).
    package static let codeDigits = 12

    package let config: LoginConfig
    package let platform: any PlatformContext

    package init(config: LoginConfig, platform: any PlatformContext) {
        self.config = config
        self.platform = platform
    }

    /// The identity `unixUser` enrols as: `enrol_identity` with `%u` replaced by the name.
    package func identity(for unixUser: String) -> String {
        var out: [UInt8] = []
        let template = Array(config.enrolIdentity.utf8)
        var i = 0
        while i < template.count {
            if template[i] == UInt8(ascii: "%"), i + 1 < template.count, template[i + 1] == UInt8(ascii: "u") {
                out.append(contentsOf: unixUser.utf8)
                i += 2
            } else {
                out.append(template[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Whether an existing registration may be replaced by an enrolment: one the backend
    /// blocked or revoked (signed answers, recorded by Login), and a token on this host (a link
    /// for device mode is the device's to renew).
    package static func mayReplace(_ account: AccountMap.Account) -> Bool {
        !account.linked && (account.blocked || account.revoked)
    }

    /// Why this configuration may not enrol anyone, or nil when it may (checked before the user
    /// is asked anything).
    package var refusal: String? {
        guard config.enrol else { return "enrol is not set" }
        guard !config.backend.isEmpty else { return "no backend in mpin.conf to enrol with" }
        if config.verdictKey.isEmpty, config.unsignedVerdictRefusal(for: [config.backend]) != nil {
            return "enrolment needs verdict_key in mpin.conf (what `mpin-server verdict-key` prints), "
                + "or an https backend with cacert or capath: otherwise any server answering at the backend's address could enrol the user"
        }
        return nil
    }

    /// Enrols `unixUser`: asks `askCode` for the registration code, then `askNewPIN` for the PIN
    /// (which checks it and asks twice), and only then registers, and records the account. On `.registered`
    /// `login` is called with the new PIN, whose outcome is returned beside it; the PIN is
    /// wiped before this returns.
    ///
    /// A user whose registration the backend blocked or revoked (as the account records, from
    /// a signed answer) may enrol again the same way: the new registration names the old
    /// identity (`RegisterRequest.replaces`), which the backend deletes once the code is
    /// right, and the old token is deleted here.
    package func run(unixUser: String, askCode: () -> SecretBytes?, askNewPIN: () -> NewPIN,
                    login: (borrowing SecretBytes) -> Login.Outcome) -> (outcome: Outcome, identity: String, login: Login.Outcome?) {
        let identity = identity(for: unixUser)
        if let refusal { return (.notAllowed(refusal), identity, nil) }
        let accounts = AccountMap(storage: platform.nonSecureStorage)
        let replaced: AccountMap.Account?
        do {
            replaced = try accounts.account(for: unixUser)
            if let replaced, !Self.mayReplace(replaced) { return (.failed("\(unixUser) is already registered"), identity, nil) }
        } catch {
            return (.failed(error.description), identity, nil)
        }
        guard let code = askCode(), !code.isEmpty else { return (.canceled, identity, nil) }
        // A code of the wrong form is not sent: it could not be right (the server counts it
        // as wrong all the same when it is sent).
        let wellFormed = code.withUnsafeBytes { b in b.count == Self.codeDigits && b.allSatisfy { (0x30...0x39).contains($0) } }
        guard wellFormed else { return (.codeRefused, identity, nil) }
        // The PIN before the network: a mistyped repeat must not use the code up.
        let pin: SecretBytes
        switch askNewPIN() {
        case .pin(let p): pin = p
        case .canceled: return (.canceled, identity, nil)
        case .badFormat: return (.pinFormat, identity, nil)
        }

        let sdk = MPinSDK(context: platform)
        for d in config.trustedDomains { sdk.addTrustedDomain(d) }
        // The token logs in to this host only (MPinIdentity.hostScope); without TLS that names
        // the backend, every request stays on its origin (Login.run says why).
        sdk.registersHostTokens = true
        if !config.authenticatesByTLS(config.backend) { sdk.confine(toOriginOf: config.backend) }
        var status = sdk.initialize()
        guard status.isOK else { return (.failed(status.description), identity, nil) }
        status = sdk.setBackend(config.backend, rpsPrefix: config.rpsPrefix)
        guard status.isOK else { return (Self.outcome(status), identity, nil) }
        let announced = (sdk.clientSettingsDocument?["verdictKey"]?.stringValue ?? "").lowercased()
        // mpin.conf checks the key's form only (LoginConfig.isVerdictKeyForm); a form that is no
        // point is refused here, before any server's word for it is taken.
        if !config.verdictKey.isEmpty, !Verdict.isPublicKey(config.verdictKey) {
            return (.notAllowed("verdict_key in mpin.conf is not a key `mpin-server verdict-key` prints"), identity, nil)
        }
        if !config.verdictKey.isEmpty, announced != config.verdictKey {
            return (.notAllowed("\(URLHost.of(config.backend)) announces another verdict key than verdict_key: it may not be your server"),
                    identity, nil)
        }
        // A registration of the same identity left unfinished by an earlier try is replaced;
        // so is the blocked or revoked one this enrolment replaces (its token is no use now).
        if let replaced {
            let old = sdk.listUsers(backend: replaced.backend).1.first { $0.id == replaced.identity }
            sdk.replacesMpinIdHex = old?.mpinIdHex ?? ""
            if let old { _ = sdk.deleteUser(old) }
        }
        for u in sdk.listUsers().1 where u.id == identity && u.state != .registered { _ = sdk.deleteUser(u) }
        let user = sdk.makeNewUser(id: identity, deviceName: "pam_mpin enrolment")
        status = code.withTemporaryArray { sdk.startRegistration(user, regCode: String(decoding: $0, as: UTF8.self)) }
        guard status.isOK else {
            _ = sdk.deleteUser(user)
            return (status.code == .identityNotAuthorized ? .codeRefused : Self.outcome(status), identity, nil)
        }
        status = sdk.confirmRegistration(user)
        guard status.isOK else {
            _ = sdk.deleteUser(user)
            return (Self.outcome(status), identity, nil)
        }
        status = sdk.finishRegistration(user, pin: pin)
        guard status.isOK else {
            _ = sdk.deleteUser(user)
            return (Self.outcome(status), identity, nil)
        }
        let fingerprint = MPinIdentity.fingerprint(mpinIdHex: user.mpinIdHex) ?? ""
        do {
            try accounts.set(.init(identity: identity, backend: config.backend, mpinIdHash: fingerprint,
                                   uid: try? UnixAccount.lookup(unixUser).uid), for: unixUser)
            // A new registration starts without offline logins: a record sealed with an earlier
            // PIN of the identity must not outlive it (docs/SECURITY.md, "Offline logins").
            try OfflineLogins.forget(identity: identity, storage: platform.nonSecureStorage)
        } catch {
            _ = sdk.deleteUser(user)
            return (.failed(error.description), identity, nil)
        }
        return (.registered, identity, login(pin))
    }

    /// The answer to "choose a PIN".
    package enum NewPIN: ~Copyable {
        case pin(SecretBytes)
        case canceled
        case badFormat
    }

    static func outcome(_ status: MPinStatus) -> Outcome {
        switch status.code {
        case .networkError, .httpServerError, .untrustedDomainError, .badUserAgent: .unavailable(status.message)
        case .identityNotAuthorized: .codeRefused
        default: .failed(status.description)
        }
    }
}
