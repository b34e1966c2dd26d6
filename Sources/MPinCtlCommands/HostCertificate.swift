import MPinCLI
import MPinClient
import MPinLinux
import MPinLogin
import MPinWire

/// `mpinctl host-key`: prints this host's key for access numbers (PROTOCOL.md §5.8), made if
/// there is none yet, for `mpin-server host certify` on the server.
struct HostKey: CLICommand {
    static let declaration = CommandDeclaration(
        "host-key", abstract: "Print this host's key for device-mode access numbers (for `mpin-server host certify`).",
        arguments: [], options: GlobalOptions.declarations)
    let global: GlobalOptions

    init(_ line: ParsedCommandLine) { global = GlobalOptions(line) }

    func run() throws {
        try requireRoot()
        let config = try global.loadConfig()
        let pair: (secretKey: [UInt8], publicKey: [UInt8])
        do { pair = try HostKeyStore.loadOrCreate(global.platform(config).secureStorage) } catch {
            throw CLIError(status: .storage, message: "STORAGE_ERROR: cannot read or make the host key: \(error)")
        }
        print(Hex.encode(pair.publicKey))
    }
}

/// `mpinctl host-certificate CERT`: keeps a certificate of this host's key that the server's
/// administrator made (`mpin-server host certify`), so that the host's first device login is
/// counted as its own, not in the anonymous bucket a flood may have spent (docs/SECURITY.md §5,
/// "Starve a host's device logins"). It is kept only when a verdict key this host pinned (a
/// linked user's, or `verdict_key` in mpin.conf) signed it for this host's key and it has not
/// expired: pasted from anywhere else, it is refused.
struct HostCertificateCommand: CLICommand {
    static let declaration = CommandDeclaration(
        "host-certificate", abstract: "Keep a certificate of this host's key from `mpin-server host certify`, checked with the pinned verdict key.",
        arguments: [.argument("certificate", help: "What `mpin-server host certify` printed.")],
        options: GlobalOptions.declarations)
    let global: GlobalOptions
    let certificate: String

    init(_ line: ParsedCommandLine) {
        global = GlobalOptions(line)
        certificate = line.argument("certificate")
    }

    func run() throws {
        try requireRoot()
        let config = try global.loadConfig()
        let platform = global.platform(config)
        let hostKey: [UInt8]
        do { hostKey = try HostKeyStore.loadOrCreate(platform.secureStorage).publicKey } catch {
            throw CLIError(status: .storage, message: "STORAGE_ERROR: cannot read or make the host key: \(error)")
        }
        // The keys this host pinned, each with the backend it speaks for.
        var pinned: [(backend: String, key: String)] = []
        if !config.verdictKey.isEmpty, !config.backend.isEmpty { pinned.append((config.backend, config.verdictKey)) }
        for (_, account) in try AccountMap(storage: platform.nonSecureStorage).all() where !account.verdictKey.isEmpty {
            pinned.append((account.backend, account.verdictKey))
        }
        guard !pinned.isEmpty else {
            throw CLIError(status: .failed, message: "FLOW_ERROR: no verdict key is pinned on this host to check the certificate with: "
                           + "link a user first (mpinctl link) or set verdict_key in mpin.conf")
        }
        let text = HostKeyStore.trimmed(certificate)
        let now = WallClock.nowMillis() / 1000
        var kept: [String] = []
        var expiry = 0
        for (backend, key) in pinned where !kept.contains(backend) {
            guard let serverKey = Hex.decode(key),
                  let expires = HostCredential.certificateExpiry(text, hostKey: hostKey, serverKey: serverKey, now: now) else { continue }
            do { try HostKeyStore.setCertificate(text, for: backend, in: platform.nonSecureStorage) } catch {
                throw CLIError(status: .storage, message: "STORAGE_ERROR: cannot keep the certificate: \(error)")
            }
            kept.append(backend)
            expiry = expires
        }
        guard !kept.isEmpty else {
            throw CLIError(status: .failed, message: "FLOW_ERROR: the certificate is not the pinned server's for this host's key "
                           + "(`mpinctl host-key`), or it has expired; nothing was kept")
        }
        print("CERTIFIED until \(OfflineLogins.utcText(Int64(expiry))) for \(kept.joined(separator: ", "))")
    }
}
