import ArgumentParser
import Foundation
import MPinClient
import MPinCrypto
import MPinLinux
import MPinLogin

/// Exit statuses of `mpin` (as mpinctl's, without the root check).
enum ExitStatus: Int32 {
    case ok = 0
    /// The operation ran and failed: wrong PIN, blocked, wrong access number, ...
    case failed = 1
    case storage = 5
    case unavailable = 6
}

struct CLIError: Error, CustomStringConvertible {
    let status: ExitStatus
    let message: String
    var description: String { message }
}

/// The user's own store: `$XDG_DATA_HOME/mpin`, else `~/.local/share/mpin`; directory 0700 and
/// files 0600, owned by the user, written atomically (the FileStorage of the root store).
/// Besides the SDK's users it holds the document `accounts`: identity -> backend URL.
struct UserStore {
    let directory: String

    static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") { return xdg + "/mpin" }
        guard let home = environment["HOME"], home.hasPrefix("/") else { return nil }
        return home + "/.local/share/mpin"
    }

    /// Creates the directory (and missing parents, with the default mode) when `create`.
    static func open(_ explicit: String?, create: Bool) throws -> UserStore {
        guard let dir = explicit ?? defaultDirectory() else {
            throw CLIError(status: .storage, message: "STORAGE_ERROR: neither XDG_DATA_HOME nor HOME is an absolute path")
        }
        if create {
            let parent = (dir as NSString).deletingLastPathComponent
            try? FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
            do { try FileStorage.createDirectory(dir, owner: getuid()) } catch {
                throw CLIError(status: .storage, message: "STORAGE_ERROR: \(error)")
            }
        }
        return UserStore(directory: dir)
    }

    var platform: LinuxPlatform {
        LinuxPlatform(storageDirectory: directory, requiredOwner: getuid(),
                      http: .init(connectTimeout: .seconds(5), timeout: .seconds(30)))
    }

    var accounts: AccountMap { AccountMap(storage: platform.nonSecureStorage) }

    func sdk() throws -> MPinSDK {
        let sdk = MPinSDK(context: platform)
        try check(sdk.initialize())
        return sdk
    }
}

/// Options every subcommand takes.
struct GlobalOptions: ParsableArguments {
    @Option(help: "The store directory (default $XDG_DATA_HOME/mpin, else ~/.local/share/mpin).")
    var store: String?
    @Option(help: "The RPS path prefix of the backend.")
    var rpsPrefix: String = "rps"
    @Flag(help: "Read the PIN (one line) from standard input instead of the terminal.")
    var pinStdin = false

    func readPIN(_ prompt: String) throws -> SecretBytes {
        var pin = pinStdin ? Terminal.readLine(fd: STDIN_FILENO) : try Terminal.readSecret(prompt)
        if pin.isEmpty { throw CLIError(status: .failed, message: "PIN_INPUT_CANCELED: no PIN was entered") }
        return SecretBytes(taking: &pin)
    }

    /// The registered identity to act as: `identity` if given, else the only one in the store,
    /// with an SDK whose backend is set to the identity's.
    func registered(_ identity: String?) throws -> (sdk: MPinSDK, user: MPinUser, backend: String) {
        let store = try UserStore.open(store, create: false)
        guard FileManager.default.fileExists(atPath: store.directory) else {
            throw CLIError(status: .failed, message: "USER_UNKNOWN: no identity is registered here; run `mpin register`")
        }
        let all: [(unixUser: String, account: AccountMap.Account)]
        do { all = try store.accounts.all() } catch { throw CLIError(status: .storage, message: "STORAGE_ERROR: \(error)") }
        let chosen: AccountMap.Account
        if let identity {
            guard let a = all.first(where: { $0.unixUser == identity })?.account else {
                throw CLIError(status: .failed, message: "USER_UNKNOWN: \(identity) is not registered here; run `mpin register`")
            }
            chosen = a
        } else {
            guard let only = all.first else {
                throw CLIError(status: .failed, message: "USER_UNKNOWN: no identity is registered here; run `mpin register`")
            }
            guard all.count == 1 else {
                throw CLIError(status: .failed, message: "FLOW_ERROR: several identities are registered; give --identity")
            }
            chosen = only.account
        }
        let sdk = try store.sdk()
        try check(sdk.setBackend(chosen.backend, rpsPrefix: rpsPrefix))
        guard let user = sdk.listUsers().1.first(where: { $0.id == chosen.identity }) else {
            throw CLIError(status: .failed, message: "USER_UNKNOWN: the token of \(chosen.identity) is missing; register again")
        }
        return (sdk, user, chosen.backend)
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

    /// One line from `fd` as bytes, without the newline (and a trailing CR), at most 256 bytes
    /// of it. A byte at a time, into a buffer that never grows, so no copy of the PIN is left
    /// in freed memory and nothing after the line is consumed.
    static func readLine(fd: Int32) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        var byte: UInt8 = 0
        while read(fd, &byte, 1) == 1, byte != 10 {
            if out.count < 256 { out.append(byte) }
        }
        if out.last == 13 { out.removeLast() }
        byte = 0
        return out
    }
}

func printError(_ text: String) { FileHandle.standardError.write(Data("mpin: \(text)\n".utf8)) }
