#if canImport(Glibc)
import Glibc
#endif
import MPinCLI
import MPinClient
import MPinCrypto
import MPinLinux
import MPinLogin

/// The user's own store: `$XDG_DATA_HOME/mpin`, else `~/.local/share/mpin`; directory 0700 and
/// files 0600, owned by the user, written atomically (the FileStorage of the root store).
/// Besides the SDK's users it holds the document `accounts`: identity -> backend URL.
struct UserStore {
    let directory: String
    /// The CAs the user's requests trust (`--cacert`/`--capath`, else mpin.conf's).
    var trust = TLSTrust()

    static func defaultDirectory(environment: (String) -> String? = System.environment) -> String? {
        if let xdg = environment("XDG_DATA_HOME"), xdg.hasPrefix("/") { return xdg + "/mpin" }
        guard let home = environment("HOME"), home.hasPrefix("/") else { return nil }
        return home + "/.local/share/mpin"
    }

    /// Creates the directory (and missing parents, with the default mode) when `create`.
    static func open(_ explicit: String?, create: Bool, trust: TLSTrust = TLSTrust()) throws -> UserStore {
        guard let dir = explicit ?? defaultDirectory() else {
            throw CLIError(status: .storage, message: "STORAGE_ERROR: neither XDG_DATA_HOME nor HOME is an absolute path")
        }
        if create {
            System.createDirectories(System.parentDirectory(dir))
            do { try FileStorage.createDirectory(dir, owner: getuid()) } catch {
                throw CLIError(status: .storage, message: "STORAGE_ERROR: \(error)")
            }
        }
        return UserStore(directory: dir, trust: trust)
    }

    var platform: LinuxPlatform {
        LinuxPlatform(storageDirectory: directory, requiredOwner: getuid(),
                      http: .init(caFile: trust.caFile, caDirectory: trust.caPath, connectTimeout: .seconds(5), timeout: .seconds(30)))
    }

    var accounts: AccountMap { AccountMap(storage: platform.nonSecureStorage) }

    /// The account to act on, with the key it is stored under: `identity`'s if given, else the
    /// only one in the store. `advice` ends the USER_UNKNOWN messages (what to run instead).
    func chosenAccount(_ identity: String?, advice: String) throws -> (key: String, account: AccountMap.Account) {
        guard System.fileExists(directory) else {
            throw CLIError(status: .failed, message: "USER_UNKNOWN: no identity is registered here\(advice)")
        }
        let all: [(unixUser: String, account: AccountMap.Account)]
        do { all = try accounts.all() } catch { throw CLIError(status: .storage, message: "STORAGE_ERROR: \(error)") }
        if let identity {
            guard let found = all.first(where: { sameUnixName($0.unixUser, identity) }) else {
                throw CLIError(status: .failed, message: "USER_UNKNOWN: \(identity) is not registered here\(advice)")
            }
            return (found.unixUser, found.account)
        }
        guard let only = all.first else {
            throw CLIError(status: .failed, message: "USER_UNKNOWN: no identity is registered here\(advice)")
        }
        guard all.count == 1 else {
            throw CLIError(status: .failed, message: "FLOW_ERROR: several identities are registered; give --identity")
        }
        return (only.unixUser, only.account)
    }

    func sdk() throws -> MPinSDK {
        let sdk = MPinSDK(context: platform)
        try check(sdk.initialize())
        return sdk
    }
}

/// Options every subcommand takes.
struct GlobalOptions {
    static let declarations: [OptionDeclaration] = [
        .option("store", help: "The store directory (default $XDG_DATA_HOME/mpin, else ~/.local/share/mpin)."),
        .option("rps-prefix", default: "rps", help: "The RPS path prefix of the backend."),
        .flag("pin-stdin", help: "Read the PIN (one line) from standard input instead of the terminal."),
        .option("cacert", help: "A PEM file of the CAs that name the backend's certificate (default: cacert in /etc/mpin/mpin.conf when readable, else the system's CAs)."),
        .option("capath", help: "A directory of hashed CA certificates, as --cacert (default: capath in /etc/mpin/mpin.conf when readable)."),
    ]
    let store: String?
    let rpsPrefix: String
    let pinStdin: Bool
    let trust: TLSTrust

    init(_ line: ParsedCommandLine) {
        store = line.value("store")
        rpsPrefix = line.requiredValue("rps-prefix")
        pinStdin = line.flag("pin-stdin")
        trust = TLSTrust(caFile: line.value("cacert"), caPath: line.value("capath"))
    }

    func readPIN(_ prompt: String) throws -> SecretBytes {
        var pin = pinStdin ? Terminal.readLine(fd: STDIN_FILENO) : try Terminal.readSecret(prompt)
        if pin.isEmpty { throw CLIError(status: .failed, message: "PIN_INPUT_CANCELED: no PIN was entered") }
        return SecretBytes(taking: &pin)
    }

    /// The end of `mpin approve`, for a device-mode access number and a web login's access code
    /// alike: says what waits (`waiting`) and as whom, with `advice`, asks for the PIN,
    /// authenticates with `code` (FinishAuthenticationAN) and prints `APPROVED <approved>`. A
    /// wrong PIN that blocks the identity says so.
    func approve(code: String, sdk: MPinSDK, user: MPinUser, waiting: String, advice: String, approved: String) throws {
        print("Login waiting for approval: \(waiting)")
        print("Approving as \(user.id).\(advice)")
        fflush(nil)
        try check(sdk.startAuthentication(user))
        let pin = try readPIN("M-Pin PIN for \(user.id): ")
        let result = sdk.finishAuthenticationAN(user, pin: pin, accessNumber: code)
        if result.code == .incorrectPIN, user.state == .blocked {
            throw CLIError(status: .failed, message: "BLOCKED: wrong PIN; \(user.id) is now blocked")
        }
        try check(result)
        print("APPROVED \(approved)")
    }

    /// The registered identity to act as: `identity` if given, else the only one in the store,
    /// with an SDK whose backend is set to the identity's.
    func registered(_ identity: String?) throws -> (sdk: MPinSDK, user: MPinUser, backend: String) {
        let store = try UserStore.open(store, create: false, trust: trust)
        let chosen = try store.chosenAccount(identity, advice: "; run `mpin register`").account
        let sdk = try store.sdk()
        // As `mpin register`: over plain http no request leaves the backend's origin.
        if !chosen.backend.hasPrefix("https://"), !sdk.confine(toOriginOf: chosen.backend) {
            throw CLIError(status: .failed, message: "FLOW_ERROR: \(chosen.backend) is not an absolute http(s) URL")
        }
        try check(sdk.setBackend(chosen.backend, rpsPrefix: rpsPrefix))
        guard let user = sdk.listUsers().1.first(where: { $0.id == chosen.identity }) else {
            throw CLIError(status: .failed, message: "USER_UNKNOWN: the token of \(chosen.identity) is missing; register again")
        }
        return (sdk, user, chosen.backend)
    }
}

/// What `mpin`'s https requests trust: `--cacert`/`--capath`; without either, what the host's
/// /etc/mpin/mpin.conf names (`cacert`, `capath`) when this user can read the file and it is
/// root's, as pam_mpin would read it; else the system's CAs. So a user on a host whose backend
/// has its own CA (`mpin-server init --self-signed`) needs no option.
struct TLSTrust {
    var caFile: String?
    var caPath: String?

    init(caFile: String? = nil, caPath: String? = nil, hostConfig: String = LoginConfig.defaultPath) {
        if caFile != nil || caPath != nil {
            self.caFile = caFile
            self.caPath = caPath
            return
        }
        guard let text = try? ConfigFile.read(hostConfig), let config = try? LoginConfig.parse(text, file: hostConfig) else { return }
        if !config.caFile.isEmpty, access(config.caFile, R_OK) == 0 { self.caFile = config.caFile }
        if !config.caPath.isEmpty, access(config.caPath, R_OK | X_OK) == 0 { self.caPath = config.caPath }
    }

    /// What to add to an error from a TLS failure: the options that fix it.
    static let advice = "; if the backend has a CA of its own (mpin-server init --self-signed prints its certificate), "
        + "give --cacert FILE (or --capath DIR), or ask the admin to set cacert in /etc/mpin/mpin.conf"
}
