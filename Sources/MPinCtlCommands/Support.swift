#if canImport(Glibc)
import Glibc
#endif
import MPinCLI
import MPinClient
import MPinCrypto
import MPinLinux
import MPinLogin

// The exit statuses, CLIError, check() and Terminal are MPinCLI's, shared with `mpin`.
typealias ExitStatus = MPinCLI.ExitStatus
typealias CLIError = MPinCLI.CLIError

/// Options every subcommand takes.
struct GlobalOptions {
    static let declarations: [OptionDeclaration] = [
        .option("config", default: LoginConfig.defaultPath, help: "The configuration file."),
        .option("store", help: "The store directory (overrides the configuration)."),
        .flag("pin-stdin", help: "Read the PIN (once, one line) from standard input instead of the terminal."),
    ]
    let config: String
    let store: String?
    let pinStdin: Bool

    init(_ line: ParsedCommandLine) {
        config = line.requiredValue("config")
        store = line.value("store")
        pinStdin = line.flag("pin-stdin")
    }

    /// The configuration: the file if present (required when named), then --store.
    func loadConfig(backend: String? = nil) throws -> LoginConfig {
        var c = LoginConfig()
        let verdict: ConfigVerdict
        do {
            (c, verdict) = try ModuleOptions(arguments: ["config=\(config)"]).loadConfigAndVerdict()
        } catch {
            throw CLIError(status: .config, message: "CONFIG_ERROR: \(error.description)")
        }
        if let store, let problem = c.set("store", store) { throw CLIError(status: .config, message: "CONFIG_ERROR: \(problem)") }
        // The file as just validated, for pam_mpin.so (ConfigVerdict); only root can write the store.
        if geteuid() == 0 { verdict.record(in: platform(c).nonSecureStorage) }
        if let backend {
            if let problem = c.set("backend", backend) { throw CLIError(status: .config, message: "CONFIG_ERROR: \(problem)") }
        }
        return c
    }

    func platform(_ c: LoginConfig) -> LinuxPlatform {
        let budget = Duration.milliseconds(Int64(c.timeout * 1000))
        return LinuxPlatform(storageDirectory: c.store, requiredOwner: 0,
                             http: .init(caFile: c.caFile.isEmpty ? nil : c.caFile,
                                         caDirectory: c.caPath.isEmpty ? nil : c.caPath,
                                         connectTimeout: min(budget, .milliseconds(Int64(c.connectTimeout * 1000))),
                                         timeout: max(budget, .seconds(15))))
    }

    /// A new SDK over the store, initialised (users loaded), with the config's trusted domains.
    func sdk(_ c: LoginConfig) throws -> MPinSDK {
        let sdk = MPinSDK(context: platform(c))
        for d in c.trustedDomains { sdk.addTrustedDomain(d) }
        try check(sdk.initialize())
        return sdk
    }

    /// The Unix user's registration, or USER_UNKNOWN.
    func account(_ user: String, _ config: LoginConfig) throws -> AccountMap.Account {
        guard let account = try AccountMap(storage: platform(config).nonSecureStorage).account(for: try unixName(user)) else {
            throw CLIError(status: .failed, message: "USER_UNKNOWN: \(user) is not registered")
        }
        return account
    }

    /// What a command about one registered Unix user starts with, as root: the configuration,
    /// the user's registration and an SDK over the store.
    func registeredUser(_ user: String) throws -> (config: LoginConfig, account: AccountMap.Account, sdk: MPinSDK) {
        try requireRoot()
        let config = try loadConfig()
        let account = try account(user, config)
        return (config, account, try sdk(config))
    }

    /// What a command of the MFA flavour about one registered Unix user starts with (regcode,
    /// register-dvs, sign): the MFA facade over the same store, set to the account's backend, and
    /// the account's registration there (the same identity may be registered on another backend).
    func mfaUser(_ unixUser: String) throws -> (config: LoginConfig, identity: String, mfa: MPinMFA, user: MPinUser) {
        let (config, account, _) = try registeredUser(unixUser)
        let mfa = MPinMFA(context: platform(config))
        for d in config.trustedDomains { mfa.addTrustedDomain(d) }
        // As every login of the host's: without TLS that names the backend, no request leaves
        // its origin (a PIN proof for a code or a signature included).
        if !config.authenticatesByTLS(account.backend), !mfa.confine(toOriginOf: account.backend) {
            throw CLIError(status: .failed, message: "FLOW_ERROR: \(account.backend) is not an absolute http(s) URL")
        }
        try check(mfa.initialize())
        try check(mfa.setBackend(account.backend, rpsPrefix: config.rpsPrefix))
        let key = RegCode.backendKey(account.backend)
        guard let u = mfa.listUsers().first(where: { $0.id == account.identity && $0.backend == key && $0.state == .registered }) else {
            throw CLIError(status: .failed, message: "USER_UNKNOWN: no registration for \(account.identity)")
        }
        return (config, account.identity, mfa, u)
    }

    /// A new PIN for `identity`, asked twice on a terminal: exactly `length` digits, since
    /// M-Pin reduces any PIN text to one of 10,000 values (PINFormat; docs/SECURITY.md §6.9).
    func readNewPIN(_ what: String, for identity: String, length: Int) throws -> SecretBytes {
        if let note = PINFormat.lengthNote(length: length) { printError(note) }
        let rule = PINFormat.rule(length: length)
        let pin = try readPIN("New \(what) for \(identity) (\(rule)): ")
        guard PINFormat.isValid(pin, length: length) else {
            throw CLIError(status: .failed, message: "PIN_FORMAT: the PIN must be \(rule) (pin_length); "
                           + "M-Pin reduces any PIN text to one of \(PINFormat.distinctPINs) values, so letters add nothing")
        }
        if !pinStdin {
            let again = try readPIN("Repeat the PIN: ")
            guard pin.hasSameBytes(as: again) else { throw CLIError(status: .failed, message: "PIN_INPUT_CANCELED: the PINs differ") }
        }
        return pin
    }
    /// Reads a PIN: from stdin (one line) with --pin-stdin, else from the terminal without echo.
    func readPIN(_ prompt: String) throws -> SecretBytes {
        // Bytes, not a String, taken into a SecretBytes that wipes them.
        var pin = pinStdin ? Terminal.readLine(fd: STDIN_FILENO) : try Terminal.readSecret(prompt)
        if pinStdin, pin.isEmpty {
            throw CLIError(status: .failed, message: "PIN_INPUT_CANCELED: no PIN on standard input")
        }
        return SecretBytes(taking: &pin)
    }
}

/// The name a Unix user's registration is stored under: the account's own name (`pw_name`) as
/// the name service gives it, byte for byte (docs/SECURITY.md §6.4): with a case-insensitive name
/// service `ALICE` is stored as `alice`, the account the PAM module will look up. A name the
/// name service does not know is kept as given; `registering` says so on stderr.
func unixName(_ name: String, registering: Bool = false) throws -> String {
    do {
        return try UnixAccount.lookup(name).name
    } catch {
        switch error {
        case .unknown:
            if registering {
                printError("warning: \(name) is not a Unix account here (getpwnam); logins find this registration "
                           + "only once an account of exactly that name exists")
            }
            return name
        case .notUTF8, .accountNameNotUTF8:
            throw CLIError(status: .failed, message: "USER_UNKNOWN: \(name): \(error)")
        case .nameService:
            throw CLIError(status: .unavailable, message: "UNAVAILABLE: \(name): \(error)")
        }
    }
}
func requireRoot() throws {
    guard getuid() == 0 else {
        throw CLIError(status: .notRoot, message: "NOT_ROOT: mpinctl manages the root-owned store; run it as root (sudo mpinctl ...)")
    }
}

/// Writes `mpinctl: text` to stderr.
func printError(_ text: String) { MPinCLI.printError(text, program: "mpinctl") }

/// A command whose whole input is one Unix user and the global options (show, delete, auth,
/// otp, reg-code, register-dvs): declared and read in one way, here, instead of in each.
protocol UserCommand: CLICommand {
    init(global: GlobalOptions, user: String)
}

extension UserCommand {
    init(_ line: ParsedCommandLine) {
        self.init(global: GlobalOptions(line), user: line.argument("user"))
    }

    static func userDeclaration(_ name: String, abstract: String) -> CommandDeclaration {
        CommandDeclaration(name, abstract: abstract, arguments: [.argument("user")], options: GlobalOptions.declarations)
    }
}
