import ArgumentParser
import Foundation
import MPinClient
import MPinCrypto
import MPinLinux
import MPinLogin

/// Exit codes of mpinctl (documented in README.md).
enum ExitStatus: Int32 {
    case ok = 0
    /// The operation ran and failed: wrong PIN, blocked, refused by the server, ...
    case failed = 1
    case config = 3
    case notRoot = 4
    case storage = 5
    case unavailable = 6
}

/// A failure with its exit status; the message goes to stderr with the status name.
struct CLIError: Error, CustomStringConvertible {
    let status: ExitStatus
    let message: String
    var description: String { message }
}

/// Options every subcommand takes.
struct GlobalOptions: ParsableArguments {
    @Option(help: "The configuration file.")
    var config: String = LoginConfig.defaultPath
    @Option(help: "The store directory (overrides the configuration).")
    var store: String?
    @Flag(help: "Read the PIN (once, one line) from standard input instead of the terminal.")
    var pinStdin = false

    /// The configuration: the file if present (required when named), then --store.
    func loadConfig(backend: String? = nil) throws -> LoginConfig {
        var c = LoginConfig()
        do {
            c = try ModuleOptions(arguments: ["config=\(config)"]).loadConfig()
        } catch {
            throw CLIError(status: .config, message: "CONFIG_ERROR: \(error.description)")
        }
        if let store, let problem = c.set("store", store) { throw CLIError(status: .config, message: "CONFIG_ERROR: \(problem)") }
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
        guard let account = try AccountMap(storage: platform(config).nonSecureStorage).account(for: user) else {
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

/// Throws for a non-OK status, with the exit status that fits its code.
func check(_ status: MPinStatus) throws {
    guard !status.isOK else { return }
    let exit: ExitStatus
    switch status.code {
    case .storageError: exit = .storage
    case .networkError, .httpServerError, .untrustedDomainError: exit = .unavailable
    default: exit = .failed
    }
    throw CLIError(status: exit, message: "\(status.code.rawValue): \(status.message)")
}

func requireRoot() throws {
    guard getuid() == 0 else {
        throw CLIError(status: .notRoot, message: "NOT_ROOT: mpinctl manages the root-owned store; run it as root (sudo mpinctl ...)")
    }
}

enum Terminal {
    /// Reads one line from /dev/tty with echo off, restoring the terminal afterwards.
    static func readSecret(_ prompt: String) throws -> [UInt8] {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw CLIError(status: .failed, message: "PIN_INPUT_CANCELED: no terminal; use --pin-stdin") }
        defer { close(fd) }
        var saved = termios()
        tcgetattr(fd, &saved)
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(fd, TCSAFLUSH, &quiet)
        defer { tcsetattr(fd, TCSAFLUSH, &saved); _ = write(fd, "\n", 1) }
        _ = prompt.withCString { write(fd, $0, strlen($0)) }
        return readLine(fd: fd)
    }

    /// One line from `fd` as bytes, without the newline (and a trailing CR), at most
    /// `maxPINBytes` of it (the rest of the line is read and dropped). Reads a byte at a time so
    /// that nothing after the line is consumed; the buffer never grows, so no copy of the PIN
    /// is left in freed memory.
    static func readLine(fd: Int32) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(maxPINBytes)
        var byte: UInt8 = 0
        while read(fd, &byte, 1) == 1, byte != 10 {
            if out.count < maxPINBytes { out.append(byte) }
        }
        if out.last == 13 { out.removeLast() }
        byte = 0
        return out
    }

    static let maxPINBytes = 256
}


func printError(_ text: String) { FileHandle.standardError.write(Data("mpinctl: \(text)\n".utf8)) }
