import Foundation
import Logging
import MPinClient
import MPinCrypto
import MPinJSON
import MPinLinux
import MPinServer
import Synchronization
import XCTest

/// One mpin-server on 127.0.0.1 (a port the system picks) with one application registered,
/// and a private client store; `stop()` ends both.
final class MFAServer: Sendable {
    static let redirectURI = "https://wiki.example/cb"

    let dataDir: String
    let storeDir: String
    let running: RunningServer
    let backend: String
    let app: NewAppCredentials
    /// The server's appID, which the MFA flavour calls the customer id (docs/MFA.md §1).
    let customerId: String

    /// `adjust` edits the server's config before it starts (verification mode, lifetimes).
    init(autoActivate: Bool = true, adjust: (inout ServerConfig) -> Void = { _ in }) async throws {
        let base = NSTemporaryDirectory() + "mpin-mfa-" + UUID().uuidString
        dataDir = base + "-server"
        storeDir = base + "-store"
        let dir = try DataDirectory.initialise(path: dataDir, autoActivate: autoActivate, adjust: adjust)
        customerId = try dir.loadConfig().appID
        // The database config.json names: SQLite, or PostgreSQL for the *PostgresTests.
        let database = try await dir.openDatabase()
        do {
            app = try await AppAdmin(database: database).add(name: "Wiki", redirectURI: Self.redirectURI,
                                                             logoURL: "https://wiki.example/logo.png")
        } catch { await database.close(); throw error }
        await database.close()
        try FileManager.default.createDirectory(atPath: storeDir, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o700])
        var logger = Logger(label: "mpin-mfa-tests")
        logger.logLevel = .critical
        running = try await MPinServer(dataDirectory: dataDir, host: "127.0.0.1", port: 0, logger: logger).start()
        backend = "http://127.0.0.1:\(running.port)"
    }

    func stop() async {
        await running.stop()
        try? FileManager.default.removeItem(atPath: dataDir)
        try? FileManager.default.removeItem(atPath: storeDir)
        for dir in otherDevices.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: dir) }
    }

    var platform: LinuxPlatform { LinuxPlatform(storageDirectory: storeDir, requiredOwner: getuid()) }

    /// The stores `anotherDevice` made (locked: the tests call it on the threads of `blocking`).
    private let otherDevices = Mutex<[String]>([])

    /// `mpin-server user activate`: the administrator verifies the identity.
    /// Synchronous, for the SDK's blocking threads (never a task of the cooperative pool).
    /// It names the one pending registration, as an administrator must (docs/SECURITY.md §6.2);
    /// with none or several pending, it activates nothing the user did not name and fails.
    func activate(_ userID: String) throws {
        try administer { admin in
            let pending = try await admin.pending(userID: userID)
            try await admin.activate(userID: userID, registration: pending.count == 1 ? pending[0].fingerprint : nil)
        }
    }

    /// `mpin-server user revoke`; synchronous like `activate`.
    func revoke(_ userID: String) throws { try administer { try await $0.revoke(userID: userID) } }

    /// Runs `change` with the server's `Admin` on its database, waiting for it.
    private func administer(_ change: @escaping @Sendable (Admin) async throws -> Void) throws {
        let dir = DataDirectory(path: dataDir)
        let config = try dir.loadConfig()
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var failure: (any Error)?
        Task {
            do {
                let database = try await dir.openDatabase()
                do { try await change(Admin(database: database, config: config)) } catch {
                    failure = error
                }
                await database.close()
            } catch { failure = error }
            done.signal()
        }
        done.wait()
        if let failure { throw failure }
    }

    /// The platform of another device: a store of its own, removed by `stop()`.
    func anotherDevice() throws -> LinuxPlatform {
        let dir = otherDevices.withLock { made in
            made.append(storeDir + "-device\(made.count + 2)")
            return made[made.count - 1]
        }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o700])
        return LinuxPlatform(storageDirectory: dir, requiredOwner: getuid())
    }

    // MARK: The device's side

    /// An initialised MPinMFA over the server's store, with the backend set when asked.
    func sdk(backend: Bool = true) -> MPinMFA {
        let mfa = MPinMFA(context: platform)
        _ = mfa.initialize(config: backend ? ["backend": self.backend] : [:])
        return mfa
    }

    /// A user registered with an access code from GetAccessCode, pin0 "1234" and `pin1`; the
    /// statuses of GetAccessCode and the four registration steps' last three.
    func registered(_ mfa: MPinMFA, _ id: String, pin1: String = "") -> (MPinUser, [MPinStatus.Code]) {
        let challenge = (try? Self.pkce().challenge) ?? ""
        let (s, code) = mfa.getAccessCode(authzURL: authorizationURL(challenge: challenge))
        let user = mfa.makeNewUser(id: id, deviceName: "phone")
        return (user, [s.code, mfa.startRegistration(user, accessCode: code, pmi: "").code, mfa.confirmRegistration(user).code,
                       mfa.finishRegistration(user, pin0: secret("1234"), pin1: secret(pin1)).code])
    }

    // MARK: The relying party's side (what a web app's backend does)

    /// A PKCE pair (RFC 7636): a 43-character verifier and its S256 challenge.
    static func pkce() throws -> (verifier: String, challenge: String) {
        let verifier = base64URL(try SystemRandom.bytes(32))
        return (verifier, base64URL(MPinCrypto.SHA256.hash(Array(verifier.utf8))))
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// The authorization URL an app's backend forms for GetAccessCode (docs/MFA.md §5.1).
    func authorizationURL(challenge: String, state: String = "st-1") -> String {
        backend + "/authorize?response_type=code&client_id=\(app.clientId)&redirect_uri=https%3A%2F%2Fwiki.example%2Fcb"
            + "&scope=openid&state=\(state)&code_challenge=\(challenge)&code_challenge_method=S256"
    }

    private let http = CurlHTTPTransport()

    /// A raw request, as a browser or a relying party sends it.
    func send(_ method: HTTPMethod, _ path: String, _ body: String, headers: [String: String] = [:]) -> (Int, JSONValue) {
        guard let r = try? http.send(HTTPRequest(method: method, url: backend + path, headers: headers, text: body)) else {
            return (0, .null)
        }
        return (r.status, (try? JSONParser().parse(r.body)) ?? .null)
    }

    /// A browser session: `POST /authorize` as a page's script would (access code, webOTT).
    func browserSession(challenge: String) -> (accessCode: String, webOTT: String) {
        let (_, v) = send(.post, String(authorizationURL(challenge: challenge).dropFirst(backend.count)), "{}")
        return (v["accessCode"]?.stringValue ?? "", v["webOTT"]?.stringValue ?? "")
    }

    /// `/oidc/token` with client_secret_basic: the HTTP status and the OAuth error, if any.
    func redeem(code: String, verifier: String) -> (status: Int, error: String, idToken: String) {
        let r = redeemTokens(code: code, verifier: verifier)
        return (r.status, r.error, r.idToken)
    }

    /// `/oidc/token` with client_secret_basic, with the access token of the answer too.
    func redeemTokens(code: String, verifier: String) -> (status: Int, error: String, idToken: String, accessToken: String) {
        let credentials = Data("\(app.clientId):\(app.clientSecret)".utf8).base64EncodedString()
        let form = "grant_type=authorization_code&code=\(code)&redirect_uri=https%3A%2F%2Fwiki.example%2Fcb"
            + "&code_verifier=\(verifier)"
        let (status, v) = send(.post, "/oidc/token", form, headers: ["Authorization": "Basic " + credentials,
                                                                    "Content-Type": "application/x-www-form-urlencoded"])
        return (status, v["error"]?.stringValue ?? "", v["id_token"]?.stringValue ?? "", v["access_token"]?.stringValue ?? "")
    }
}

/// Runs blocking client calls on a thread of their own, so that the in-process server's
/// tasks keep the cooperative pool.
func blocking<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { c in Thread.detachNewThread { c.resume(returning: body()) } }
}

func secret(_ s: String) -> SecretBytes { SecretBytes(copying: s.utf8) }
