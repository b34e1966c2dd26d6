#if canImport(Glibc)
import Glibc
#endif
import MPinCLI
import MPinClient
import MPinCrypto
import MPinJSON
import MPinLogin
import MPinWire

// Designated verifier signatures from the command line (docs/MFA.md §14): enrol a signing key
// for a registered Unix user, sign a file with it, and have the backend verify a signature.

struct RegisterDVS: UserCommand {
    static let declaration = userDeclaration("register-dvs", abstract: "Enrol a signing key for a registered Unix user: asks the login PIN, then a new signing PIN twice.")
    let global: GlobalOptions
    let user: String

    func run() throws {
        let (config, identity, mfa, u) = try global.mfaUser(user)
        let pin = try global.readPIN(config.prompt)
        try check(mfa.startRegistrationDVS(u, pin0: pin, pin1: SecretBytes()))
        let signingPIN = try global.readNewPIN("signing PIN", for: identity, length: config.pinLength)
        try check(mfa.finishRegistrationDVS(u, pinDVS: signingPIN, nfc: SecretBytes()))
        print("SIGNING KEY ENROLLED for \(user) (\(identity))")
    }
}

struct Sign: CLICommand {
    static let declaration = CommandDeclaration(
        "sign", abstract: "Sign a file with a Unix user's signing key (asks the signing PIN); writes FILE.mpinsig.",
        arguments: [.argument("user"), .argument("file", help: "The file to sign.")],
        options: GlobalOptions.declarations + [.option("output", help: "Where to write the signature (default: FILE.mpinsig).")])
    let global: GlobalOptions
    let user: String, file: String, output: String?

    init(_ line: ParsedCommandLine) {
        global = GlobalOptions(line)
        user = line.argument("user")
        file = line.argument("file")
        output = line.value("output")
    }

    func run() throws {
        let hash = try fileSHA256(file)
        let (_, identity, mfa, u) = try global.mfaUser(user)
        guard u.canSign else {
            throw CLIError(status: .failed, message: "FLOW_ERROR: \(user) has no signing key; run `mpinctl register-dvs \(user)` first")
        }
        let pin = try global.readPIN("Signing PIN for \(identity): ")
        let (status, signature) = mfa.sign(u, documentHash: hash, pin0: pin, pin1: SecretBytes(),
                                           epochTime: System.unixTime())
        try check(status)
        let path = output ?? file + ".mpinsig"
        let bytes: [UInt8]
        do { bytes = try WireCoding.encode(signature.message) } catch {
            throw CLIError(status: .failed, message: "the signature could not be encoded")
        }
        try writeAtomically(path, bytes + [0x0A])
        print("SIGNED \(file) as \(identity): \(path)")
    }
}

struct Verify: CLICommand {
    static let declaration = CommandDeclaration(
        "verify", abstract: "Ask the backend whether SIGNATURE is a valid signature of FILE; prints the signer. Exit 0 only when valid.",
        arguments: [.argument("file", help: "The signed file."),
                    .argument("signature", help: "The signature (JSON, as `mpinctl sign` writes it).")],
        options: GlobalOptions.declarations + [.option("backend", help: "The backend that verifies (overrides the configuration).")])
    let global: GlobalOptions
    let file: String, signature: String, backend: String?

    init(_ line: ParsedCommandLine) {
        global = GlobalOptions(line)
        file = line.argument("file")
        signature = line.argument("signature")
        backend = line.value("backend")
    }

    func run() throws {
        let config = try global.loadConfig(backend: backend)
        guard !config.backend.isEmpty else { throw CLIError(status: .config, message: "CONFIG_ERROR: no backend; give --backend") }
        guard let text = System.readFile(signature) else {
            throw CLIError(status: .failed, message: "cannot read \(signature)")
        }
        let message: DVSSignatureMessage
        do { message = try WireCoding.strict(DVSSignatureMessage.self, from: text) } catch {
            throw CLIError(status: .failed, message: "INVALID: \(signature) is not an M-Pin signature")
        }
        let hash = try fileSHA256(file)
        guard Hex.canonical(message.hash) == Hex.encode(hash) else {
            print("INVALID")
            throw CLIError(status: .failed, message: "INVALID: \(file) is not the document that was signed")
        }
        let mfa = MPinMFA(context: global.platform(config))
        for d in config.trustedDomains { mfa.addTrustedDomain(d) }
        let node = config.backends.first ?? config.backend
        if !config.authenticatesByTLS(node), !mfa.confine(toOriginOf: node) {
            throw CLIError(status: .failed, message: "FLOW_ERROR: \(node) is not an absolute http(s) URL")
        }
        let (status, valid, userId) = mfa.verifySignature(message, server: node, rpsPrefix: config.rpsPrefix)
        try check(status)
        guard valid else {
            print("INVALID")
            throw CLIError(status: .failed, message: "INVALID: invalid signature (the backend does not accept it)")
        }
        print("VALID signed by \(userId) at \(message.timestamp)")
    }
}

/// SHA-256 of a file's bytes, read in blocks.
func fileSHA256(_ path: String) throws -> [UInt8] {
    var hasher = SHA256()
    guard System.forEachBlock(ofFile: path, { hasher.update($0) }) else {
        throw CLIError(status: .failed, message: "cannot read \(path)")
    }
    return hasher.finalize()
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename, so
/// that an existing signature is replaced whole or not at all. Signatures are public (0644).
func writeAtomically(_ path: String, _ bytes: [UInt8]) throws {
    let temporary = path + ".tmp-\(getpid())"
    unlink(temporary)
    guard System.createFile(temporary, bytes, mode: 0o644) else {
        throw CLIError(status: .failed, message: "cannot write \(temporary)")
    }
    guard rename(temporary, path) == 0 else {
        unlink(temporary)
        throw CLIError(status: .failed, message: "cannot write \(path)")
    }
}
