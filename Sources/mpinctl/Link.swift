import ArgumentParser
import MPinCLI
import MPinLogin

/// `mpinctl link USER --identity ID [--backend URL]`: maps a Unix user to an identity without a
/// token on this host, for `mode = device` logins approved on the user's own device (`mpin`).
struct Link: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Link a Unix user to an M-Pin identity without a token here (for mode = device).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The Unix user who will log in.") var user: String
    @Option(help: "The M-Pin identity the user approves logins with on their device.") var identity: String
    @Option(help: "The backend URL (overrides the configuration).") var backend: String?

    func run() throws {
        try requireRoot()
        let config = try global.loadConfig(backend: backend)
        guard !config.backend.isEmpty else { throw CLIError(status: .config, message: "CONFIG_ERROR: no backend; give --backend") }
        guard !identity.isEmpty, identity.utf8.count <= 256 else {
            throw CLIError(status: .failed, message: "FLOW_ERROR: the identity must be 1 to 256 bytes")
        }
        let user = try unixName(self.user, registering: true)
        let accounts = AccountMap(storage: global.platform(config).nonSecureStorage)
        if let existing = try accounts.account(for: user) {
            throw CLIError(status: .failed, message: "FLOW_ERROR: \(user) is already mapped to \(existing.identity); run `mpinctl delete \(user)` first")
        }
        try accounts.set(.init(identity: identity, backend: config.backend, linked: true), for: user)
        print("LINKED \(user) to \(identity) on \(config.backend)")
    }
}
