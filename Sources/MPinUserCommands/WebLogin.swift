#if canImport(Glibc)
import Glibc
#endif
import MPinCLI
import MPinClient
import MPinWire

/// Web logins of mpin-server's OpenID provider (docs/MFA.md §5.4). The login page shows a
/// 7-digit code, which `mpin approve` takes like a device-mode access number (the server
/// maps it to the page's session), and the M-Pin app link `BACKEND#<access code>`, which
/// `mpin approve` takes here.
struct WebLoginLink: Equatable {
    /// The backend the link names (scheme, host and port; no path, query or fragment).
    var origin: String
    /// The session's access code: 32 lower-case hex characters.
    var accessCode: String

    /// A link `http(s)://host[:port][/path]#<32 hex>`; nil for anything else (an access number).
    init?(_ text: String) {
        guard text.hasPrefix("https://") || text.hasPrefix("http://"), let hash = text.lastIndex(of: "#") else { return nil }
        let code = String(text[text.index(after: hash)...]).lowercased()
        guard code.utf8.count == 32, code.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) })
        else { return nil }
        guard let origin = Self.origin(String(text[..<hash])) else { return nil }
        self.origin = origin
        accessCode = code
    }

    /// `scheme://host[:port]`, lower-cased, of an http(s) URL; nil when it has none.
    static func origin(_ url: String) -> String? {
        // Without Foundation (mpin carries no ICU, docs/PERFORMANCE.md §2.6): the scheme ends at
        // the first "://".
        let scheme: String
        if url.lowercased().hasPrefix("https://") { scheme = "https" } else if url.lowercased().hasPrefix("http://") { scheme = "http" } else { return nil }
        let rest = url.dropFirst(scheme.count + 3)
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.isEmpty, !authority.contains("@") else { return nil }
        return scheme + "://" + authority.lowercased()
    }

    /// Approves the login as `mpin approve` does an access number: shows what asks, asks for
    /// the PIN and authenticates with the access code. The link must name the identity's own
    /// backend: a code is only ever sent to the server the identity is registered with.
    func approve(global: GlobalOptions, identity: String?) throws {
        let (sdk, user, backend) = try global.registered(identity)
        guard Self.origin(backend) == origin else {
            throw CLIError(status: .failed, message:
                "FLOW_ERROR: the link is for \(origin), but \(user.id) is registered with \(backend)")
        }
        let (status, details) = sdk.sessionDetails(accessCode: accessCode)
        try check(status)
        let what = details.loginDescription.isEmpty
            ? "web login to \(AccessNumberDescription.sanitized(details.appName))" : details.loginDescription
        try global.approve(code: accessCode, sdk: sdk, user: user, waiting: what, advice: "",
                           approved: AccessNumberDescription.sanitized(details.appName))
    }
}

/// `mpin refuse`: ends a web login that waits for approval; its page shows it refused.
struct Refuse: CLICommand {
    static let declaration = CommandDeclaration(
        "refuse", abstract: "Refuse a web login waiting for approval (its login code or M-Pin app link); its page shows it refused.",
        arguments: [.argument("code", help: "The login code the page shows (dashes and spaces are ignored), or its M-Pin app link.")],
        options: GlobalOptions.declarations + [.option("identity", help: "The identity whose backend to ask (needed when several are registered).")])
    let global: GlobalOptions
    let code: String, identity: String?

    init(_ line: ParsedCommandLine) {
        global = GlobalOptions(line)
        code = line.argument("code")
        identity = line.value("identity")
    }

    func run() throws {
        let (_, user, backend) = try global.registered(identity)
        let wid: String
        if let link = WebLoginLink(code) {
            guard WebLoginLink.origin(backend) == link.origin else {
                throw CLIError(status: .failed, message: "FLOW_ERROR: the link is for \(link.origin), but \(user.id) is registered with \(backend)")
            }
            wid = link.accessCode
        } else {
            wid = String(code.filter { $0 != "-" && $0 != " " })
            guard AccessNumber.sdkAccepts(wid) else {
                throw CLIError(status: .failed, message: "INCORRECT_ACCESS_NUMBER: a login code is 7 digits with a check digit")
            }
        }
        let store = try UserStore.open(global.store, create: false, trust: global.trust)
        let mfa = MPinMFA(context: store.platform)
        // As `mpin approve`: over plain http no request leaves the backend's origin.
        if !backend.hasPrefix("https://"), !mfa.confine(toOriginOf: backend) {
            throw CLIError(status: .failed, message: "FLOW_ERROR: \(backend) is not an absolute http(s) URL")
        }
        try check(mfa.initialize())
        try check(mfa.setBackend(backend, rpsPrefix: global.rpsPrefix))
        try check(mfa.abortSession(accessCode: wid))
        print("REFUSED")
    }
}
