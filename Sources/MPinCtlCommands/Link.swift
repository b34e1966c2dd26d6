import MPinCLI
import MPinClient
import MPinCrypto
import MPinJSON
import MPinLinux
import MPinLogin
import MPinWire

/// `mpinctl link USER --identity ID --registration FINGERPRINT [--backend URL]`: maps a Unix user
/// to an identity without a token on this host, for `mode = device` logins approved on the
/// user's own device (`mpin`). It pins which of the identity's registrations may approve (the
/// fingerprint `mpin list --fingerprints` shows on the device) and the backend's verdict key,
/// so that neither a registration someone else started for the identity nor whoever answers on
/// the backend's address can approve a login (docs/SECURITY.md §6.1, §6.2).
struct Link: CLICommand {
    static let declaration = CommandDeclaration(
        "link", abstract: "Link a Unix user to an M-Pin identity without a token here (for mode = device).",
        arguments: [.argument("user", help: "The Unix user who will log in.")],
        options: GlobalOptions.declarations + [
            .option("identity", required: true, help: "The M-Pin identity the user approves logins with on their device."),
            .option("registration", required: true,
                    help: "The fingerprint of the device's registration (`mpin list --fingerprints` on the device)."),
            .option("backend", help: "The backend URL (overrides the configuration)."),
            .option("verdict-key", help: "The key `mpin-server verdict-key` prints on the server: the backend must announce this one."),
        ])
    let global: GlobalOptions
    let user: String, identity: String, registration: String, backend: String?, verdictKey: String?

    init(_ line: ParsedCommandLine) {
        global = GlobalOptions(line)
        user = line.argument("user")
        identity = line.requiredValue("identity")
        registration = line.requiredValue("registration")
        backend = line.value("backend")
        verdictKey = line.value("verdict-key")
    }

    func run() throws {
        try requireRoot()
        let config = try global.loadConfig(backend: backend)
        guard !config.backend.isEmpty else { throw CLIError(status: .config, message: "CONFIG_ERROR: no backend; give --backend") }
        guard !identity.isEmpty, identity.utf8.count <= 256 else {
            throw CLIError(status: .failed, message: "FLOW_ERROR: the identity must be 1 to 256 bytes")
        }
        let fingerprint = registration.lowercased()
        guard fingerprint.utf8.count == 64, Hex.decode(fingerprint) != nil else {
            throw CLIError(status: .failed, message: "FLOW_ERROR: --registration takes the 64 hex digits `mpin list --fingerprints` shows")
        }
        let user = try unixName(self.user, registering: true)
        let accounts = AccountMap(storage: global.platform(config).nonSecureStorage)
        if let existing = try accounts.account(for: user) {
            throw CLIError(status: .failed, message: "FLOW_ERROR: \(user) is already mapped to \(existing.identity); run `mpinctl delete \(user)` first")
        }
        // The verdict key is taken from the backend now and pinned: from then on, approvals
        // are believed only with its signature.
        let sdk = try global.sdk(config)
        if !config.authenticatesByTLS(config.backend), !sdk.confine(toOriginOf: config.backend) {
            throw CLIError(status: .failed, message: "FLOW_ERROR: \(config.backend) is not an absolute http(s) URL")
        }
        try check(sdk.setBackend(config.backend, rpsPrefix: config.rpsPrefix))
        var key = sdk.clientSettingsDocument?["verdictKey"]?.stringValue ?? ""
        try checkAnnouncedVerdictKey(key, expected: expectedVerdictKey(verdictKey, config), backend: config.backend, config: config)
        if !Verdict.isPublicKey(key) {
            key = ""
            if let refusal = config.unsignedVerdictRefusal(for: [config.backend]) {
                throw CLIError(status: .failed, message: "FLOW_ERROR: the backend does not sign its verdicts: \(refusal)")
            }
        }
        try accounts.set(.init(identity: identity, backend: config.backend, linked: true, mpinIdHash: fingerprint,
                               verdictKey: key.lowercased(), uid: try? UnixAccount.lookup(user).uid), for: user)
        // This host's key for access numbers (PROTOCOL.md §5.8), certified at the first approved
        // login; a device login makes it otherwise.
        _ = try? HostKeyStore.loadOrCreate(global.platform(config).secureStorage)
        print("LINKED \(user) to \(identity) on \(config.backend)")
    }
}
