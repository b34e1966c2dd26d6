/// The arguments of a `pam_mpin.so` line in /etc/pam.d (pam_u2f's style: `name` or
/// `name=value`). Settings override the config file; unknown arguments are reported, not fatal.
package struct ModuleOptions: Sendable, Equatable {
    package var configPath = LoginConfig.defaultPath
    /// Config keys set on the module line (backend, store, prompt, timeout, cacert, ...).
    package var overrides: [(key: String, value: String)] = []
    /// Unknown users are ignored (PAM_IGNORE) instead of refused (PAM_USER_UNKNOWN).
    package var nouserok = false
    /// `nouserok` covers root too (EnforcementPolicy): without it, root with no registration
    /// is refused even on a `nouserok` line.
    package var nouserokRoot = false
    /// Try the PIN from PAM_AUTHTOK first, prompting if there is none.
    package var tryFirstPass = false
    /// Take the PIN from PAM_AUTHTOK only; never prompt.
    package var useFirstPass = false
    /// Log each step to syslog (never the PIN).
    package var debug = false
    /// Account management answers PAM_IGNORE (logged) instead of PAM_SERVICE_ERR when the
    /// configuration, the name service or the store fails (`account_fail_open`).
    package var accountFailOpen = false
    /// The mpin-pam-helper pam_mpin.so runs (`helper=PATH`), if the line names one; pam_mpin.so
    /// reads it, and mpinctl doctor checks it.
    package var helperPath: String?
    /// The resident helper's socket pam_mpin.so connects to first when it runs as root
    /// (`helper_socket=PATH`, or `none` for no resident helper); pam_mpin.so reads it.
    package var helperSocket: String?
    /// `failmode=secure`: a backend that cannot be reached is a refusal (PAM_AUTH_ERR), as a
    /// line's `authinfo_unavail=die` would make it; `failmode=safe` (the default) answers
    /// PAM_AUTHINFO_UNAVAIL, which the line's control turns into the next method (the packaged
    /// profile's `authinfo_unavail=ignore`) or a refusal.
    package var failSecure = false
    /// Arguments that were not understood, for the log.
    package var unknown: [String] = []

    package init() {}

    package static func == (a: ModuleOptions, b: ModuleOptions) -> Bool {
        a.configPath == b.configPath && a.overrides.map { "\($0.key)=\($0.value)" } == b.overrides.map { "\($0.key)=\($0.value)" }
            && a.nouserok == b.nouserok && a.nouserokRoot == b.nouserokRoot && a.tryFirstPass == b.tryFirstPass && a.useFirstPass == b.useFirstPass
            && a.debug == b.debug && a.helperPath == b.helperPath && a.helperSocket == b.helperSocket && a.unknown == b.unknown
            && a.accountFailOpen == b.accountFailOpen && a.failSecure == b.failSecure
    }

    /// Module-line names that map to config keys.
    static let configKeys = ["backend": "backend", "store": "store", "prompt": "prompt", "timeout": "timeout",
                             "cacert": "cacert", "capath": "capath", "rps_prefix": "rps_prefix",
                             "connect_timeout": "connect_timeout", "mode": "mode", "device_timeout": "device_timeout",
                             "pin_length": "pin_length", "enrol": "enrol", "enrol_identity": "enrol_identity",
                             "verdict_key": "verdict_key", "require_group": "require_group", "exempt_group": "exempt_group",
                             "offline": "offline", "offline_max_age": "offline_max_age", "offline_attempts": "offline_attempts",
                             "tpm": "tpm"]

    package init(arguments: [String]) {
        self.init()
        for arg in arguments {
            let (name, value): (String, String?) = {
                guard let eq = arg.firstIndex(of: "=") else { return (arg, nil) }
                return (String(arg[..<eq]), String(arg[arg.index(after: eq)...]))
            }()
            switch (name, value) {
            case ("config", let v?): configPath = v
            case ("nouserok", nil): nouserok = true
            case ("nouserok_root", nil): nouserokRoot = true
            case ("try_first_pass", nil): tryFirstPass = true
            case ("use_first_pass", nil): useFirstPass = true
            case ("debug", nil): debug = true
            case ("account_fail_open", nil): accountFailOpen = true
            case ("failmode", "secure"): failSecure = true
            case ("failmode", "safe"): failSecure = false
            case ("helper", let v?): helperPath = v
            case ("helper_socket", let v?): helperSocket = v
            case ("enrol", nil): overrides.append(("enrol", "yes"))
            case ("offline", nil): overrides.append(("offline", "yes"))
            case (let n, let v?) where Self.configKeys[n] != nil: overrides.append((Self.configKeys[n]!, v))
            default: unknown.append(arg)
            }
        }
    }

    /// The configuration: the file (if it exists, or if it was named explicitly), then the
    /// module-line overrides.
    package func loadConfig(readFile: (String) throws(ConfigError) -> String? = { p throws(ConfigError) in try ConfigFile.read(p) })
        throws(ConfigError) -> LoginConfig {
        var config = try fileConfig(try readFile(configPath))
        try applyOverrides(to: &config)
        return config
    }

    /// `loadConfig()`, and pam_mpin.so's verdict on the file (ConfigVerdict) made from the very
    /// bytes parsed, for the caller to record in the store.
    package func loadConfigAndVerdict() throws(ConfigError) -> (config: LoginConfig, verdict: ConfigVerdict) {
        let file = try ConfigFile.readBytes(configPath)
        var config = try fileConfig(file.map { String(decoding: $0, as: UTF8.self) })
        let verdict = ConfigVerdict(path: configPath, file: file, fileConfig: config)
        try applyOverrides(to: &config)
        return (config, verdict)
    }

    /// The file alone: `text` parsed, or the defaults when the default file does not exist.
    private func fileConfig(_ text: String?) throws(ConfigError) -> LoginConfig {
        if let text { return try LoginConfig.parse(text, file: configPath) }
        guard configPath == LoginConfig.defaultPath else {
            throw ConfigError(file: configPath, line: 0, message: "cannot read the configuration file")
        }
        return LoginConfig()
    }

    private func applyOverrides(to config: inout LoginConfig) throws(ConfigError) {
        for (key, value) in overrides {
            if let problem = config.set(key, value) { throw ConfigError(file: "module arguments", line: 0, message: problem) }
        }
    }
}
