#if canImport(Glibc)
import Glibc
#endif
import MPinCLI
import MPinClient
import MPinCrypto
import MPinJSON
import MPinLinux
import MPinLogin
import MPinWire

struct Register: CLICommand {
    static let declaration = CommandDeclaration(
        "register", abstract: "Register an M-Pin identity on this device and set its PIN.",
        options: GlobalOptions.declarations + [
            .option("backend", required: true, help: "The backend URL."),
            .option("identity", required: true, help: "The M-Pin identity (e.g. an e-mail address)."),
            .option("activation-code", help: "The activation code the administrator of the backend issued."),
            .option("wait", default: "300", help: "Seconds to wait for the identity to be verified."),
            .option("pin-length", default: String(PINFormat.defaultLength),
                    help: "How many digits the PIN has, 4 to 8. M-Pin reduces any PIN to one of 10,000 values, so more than 4 digits add no strength."),
            .option("verdict-key", help: "The key `mpin-server verdict-key` prints on the server: the backend must announce this one (needed over plain http)."),
        ])
    let global: GlobalOptions
    let backend: String, identity: String, activationCode: String?, verdictKey: String?
    let wait: Int, pinLength: Int

    init(_ line: ParsedCommandLine) throws {
        global = GlobalOptions(line)
        backend = line.requiredValue("backend")
        identity = line.requiredValue("identity")
        activationCode = line.value("activation-code")
        wait = try line.integer("wait")
        pinLength = try line.integer("pin-length")
        verdictKey = line.value("verdict-key")
    }

    func run() throws {
        guard backend.hasPrefix("http://") || backend.hasPrefix("https://") else {
            throw CLIError(status: .failed, message: "CONFIG_ERROR: --backend must be an http:// or https:// URL")
        }
        guard PINFormat.allowedLengths.contains(pinLength) else {
            throw CLIError(status: .failed, message: "CONFIG_ERROR: --pin-length must be 4 to 8")
        }
        let store = try UserStore.open(global.store, create: true, trust: global.trust)
        if try store.accounts.account(for: identity) != nil {
            throw CLIError(status: .failed, message: "FLOW_ERROR: \(identity) is already registered; run `mpin delete --identity \(identity)` first")
        }
        let sdk = try store.sdk()
        // Over plain http nothing says who answers: every request stays on the backend's
        // origin, and the verdict key it announces is pinned only when it is the one the
        // admin read on the server (docs/SECURITY.md §3).
        let plain = !backend.hasPrefix("https://")
        if plain, !sdk.confine(toOriginOf: backend) {
            throw CLIError(status: .failed, message: "FLOW_ERROR: \(backend) is not an absolute http(s) URL")
        }
        try check(sdk.setBackend(backend, rpsPrefix: global.rpsPrefix))
        let announced = (sdk.clientSettingsDocument?["verdictKey"]?.stringValue ?? "").lowercased()
        if let verdictKey {
            guard Verdict.isPublicKey(verdictKey) else {
                throw CLIError(status: .failed, message: "FLOW_ERROR: --verdict-key takes the 130 hex digits `mpin-server verdict-key` prints")
            }
            guard announced == verdictKey.lowercased() else {
                throw CLIError(status: .failed, message: "FLOW_ERROR: \(backend) announces another verdict key than --verdict-key: "
                               + "it may not be your server; nothing was registered")
            }
        } else if plain {
            throw CLIError(status: .failed, message: "FLOW_ERROR: over plain http nothing authenticates the backend, so the key it "
                           + "announces cannot be pinned: give --verdict-key with what `mpin-server verdict-key` prints on the server "
                           + "(or use https); nothing was registered")
        }
        for u in sdk.listUsers().1 where u.id == identity { _ = sdk.deleteUser(u) }
        let user = sdk.makeNewUser(id: identity)
        try check(sdk.startRegistration(user, activateCode: activationCode ?? ""))
        let deadline = System.monotonicSeconds() + Double(wait)
        var said = false
        while true {
            let status = sdk.confirmRegistration(user)
            if status.isOK { break }
            guard status.code == .identityNotVerified, System.monotonicSeconds() < deadline else { try check(status); return }
            if !said {
                // The administrator activates this registration by its fingerprint
                // (docs/SECURITY.md §6.2).
                let fingerprint = MPinIdentity.fingerprint(mpinIdHex: user.mpinIdHex) ?? "-"
                print("waiting for \(identity) to be verified: registration \(fingerprint)")
                fflush(nil)
                said = true
            }
            System.sleep(seconds: 2)
        }
        if let note = PINFormat.lengthNote(length: pinLength) { printError(note, program: "mpin") }
        let rule = PINFormat.rule(length: pinLength)
        let pin = try global.readPIN("New M-Pin PIN for \(identity) (\(rule)): ")
        guard PINFormat.isValid(pin, length: pinLength) else {
            throw CLIError(status: .failed, message: "PIN_FORMAT: the PIN must be \(rule); "
                           + "M-Pin reduces any PIN text to one of \(PINFormat.distinctPINs) values, so letters add nothing")
        }
        if !global.pinStdin {
            let again = try global.readPIN("Repeat the PIN: ")
            guard pin.hasSameBytes(as: again) else { throw CLIError(status: .failed, message: "PIN_INPUT_CANCELED: the PINs differ") }
        }
        try check(sdk.finishRegistration(user, pin: pin))
        try store.accounts.set(.init(identity: identity, backend: backend), for: identity)
        print("REGISTERED \(identity) on \(backend)")
    }
}

struct Approve: CLICommand {
    static let declaration = CommandDeclaration(
        "approve", abstract: "Approve a login waiting for an access number: shows what asks, then asks for the PIN.",
        arguments: [.argument("access-number", help: "The access number the login shows (dashes and spaces are ignored), or a web login's M-Pin app link.")],
        options: GlobalOptions.declarations + [.option("identity", help: "The identity to approve with (needed when several are registered).")])
    let global: GlobalOptions
    let accessNumber: String, identity: String?

    init(_ line: ParsedCommandLine) {
        global = GlobalOptions(line)
        accessNumber = line.argument("access-number")
        identity = line.value("identity")
    }

    func run() throws {
        if let link = WebLoginLink(accessNumber) { return try link.approve(global: global, identity: identity) }
        let number = String(accessNumber.filter { $0 != "-" && $0 != " " })
        let (sdk, user, _) = try global.registered(identity)
        try check(sdk.checkAccessNumber(number))
        let (status, description) = sdk.accessNumberDescription(number)
        try check(status)
        try global.approve(code: number, sdk: sdk, user: user, waiting: description.isEmpty ? "(no description)" : description,
                           advice: " If the login waits at a prompt, press Enter there once you have typed the PIN.",
                           approved: number)
    }
}

struct List: CLICommand {
    static let declaration = CommandDeclaration(
        "list", abstract: "List the identities registered on this device.",
        options: GlobalOptions.declarations + [
            .flag("fingerprints", help: "Add each registration's fingerprint, which `mpinctl link --registration` pins on a host."),
        ])
    let global: GlobalOptions
    let fingerprints: Bool

    init(_ line: ParsedCommandLine) {
        global = GlobalOptions(line)
        fingerprints = line.flag("fingerprints")
    }

    func run() throws {
        let store = try UserStore.open(global.store, create: false, trust: global.trust)
        guard System.fileExists(store.directory) else { return }
        let sdk = try store.sdk()
        for (id, account) in try store.accounts.all() {
            let user = sdk.listUsers(backend: account.backend).1.first { $0.id == id }
            let state = user?.state.rawValue ?? "MISSING"
            guard fingerprints else { print("\(id)\t\(account.backend)\t\(state)"); continue }
            let fingerprint = user.flatMap { MPinIdentity.fingerprint(mpinIdHex: $0.mpinIdHex) } ?? "-"
            print("\(id)\t\(account.backend)\t\(state)\t\(fingerprint)")
        }
    }
}

struct Delete: CLICommand {
    static let declaration = CommandDeclaration(
        "delete", abstract: "Delete an identity and its token from this device (no server call).",
        options: GlobalOptions.declarations + [.option("identity", help: "The identity to delete (needed when several are registered).")])
    let global: GlobalOptions
    let identity: String?

    init(_ line: ParsedCommandLine) {
        global = GlobalOptions(line)
        identity = line.value("identity")
    }

    func run() throws {
        let store = try UserStore.open(global.store, create: false, trust: global.trust)
        let (id, account) = try store.chosenAccount(identity, advice: "")
        let sdk = try store.sdk()
        for u in sdk.listUsers(backend: account.backend).1 where u.id == id { try check(sdk.deleteUser(u)) }
        try store.accounts.set(nil, for: id)
        print("DELETED \(id)")
    }
}

struct OTP: CLICommand {
    static let declaration = CommandDeclaration(
        "otp", abstract: "Authenticate and print a one-time password from the backend.",
        options: GlobalOptions.declarations + [.option("identity", help: "The identity (needed when several are registered).")])
    let global: GlobalOptions
    let identity: String?

    init(_ line: ParsedCommandLine) {
        global = GlobalOptions(line)
        identity = line.value("identity")
    }

    func run() throws {
        let (sdk, user, _) = try global.registered(identity)
        try printOneTimePassword(sdk, user) { try global.readPIN("M-Pin PIN for \(user.id): ") }
    }
}
