import MPinCLI
import MPinClient
import MPinLinux
import MPinLogin
import MPinWire

/// `mpinctl pin-key USER --verdict-key HEX`: pins the backend's verdict key for a registration
/// or link made before keys were pinned (PROTOCOL.md §4.5.1), so that its logins work over
/// plain http again and believe only that server. The key comes from the server's own
/// `mpin-server verdict-key`, read by the administrator, never from the network.
struct PinKey: CLICommand {
    static let declaration = CommandDeclaration(
        "pin-key", abstract: "Pin the backend's verdict key for a user registered or linked before keys were pinned.",
        arguments: [.argument("user", help: "The Unix user.")],
        options: GlobalOptions.declarations + [
            .option("verdict-key", required: true, help: "The key `mpin-server verdict-key` prints on the server (130 hex digits)."),
        ])
    let global: GlobalOptions
    let user: String, verdictKey: String

    init(_ line: ParsedCommandLine) {
        global = GlobalOptions(line)
        user = line.argument("user")
        verdictKey = line.requiredValue("verdict-key")
    }

    func run() throws {
        try requireRoot()
        let config = try global.loadConfig()
        let key = verdictKey.lowercased()
        guard Verdict.isPublicKey(key) else {
            throw CLIError(status: .failed, message: "FLOW_ERROR: --verdict-key takes the 130 hex digits `mpin-server verdict-key` prints")
        }
        let user = try unixName(self.user)
        let accounts = AccountMap(storage: global.platform(config).nonSecureStorage)
        guard var account = try accounts.account(for: user) else {
            throw CLIError(status: .failed, message: "USER_UNKNOWN: \(user) is not registered")
        }
        if account.linked {
            account.verdictKey = key
            try accounts.set(account, for: user)
        } else {
            let sdk = try global.sdk(config)
            guard let registered = sdk.listUsers(backend: account.backend).1.first(where: { $0.id == account.identity }) else {
                throw CLIError(status: .failed, message: "USER_UNKNOWN: \(user)'s identity is not in the store")
            }
            try check(sdk.pinVerdictKey(registered, publicKeyHex: key))
        }
        print("PINNED \(user)")
    }
}
