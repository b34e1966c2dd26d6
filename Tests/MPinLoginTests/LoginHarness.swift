import Foundation
import MPinClient
import MPinCrypto
import MPinJSON
import MPinLinux
import MPinLogin
import MPinTestSupport
import XCTest

/// A login against an M-Pin backend double, over in-memory stores: registers identities through
/// the SDK as mpinctl does, then runs `Login.run` and collects what it did.
final class LoginHarness {
    let backend: MPinBackendDouble
    let secure = MemoryStorage()
    let plain: any Storage
    var config = LoginConfig()

    /// What one `login` call returned and did.
    struct Run {
        var outcome: Login.Outcome
        var identity: String
        var events: [LoginEvent]
        var pinAsked: Bool
        var elapsed: Duration
        /// The backend's routes requested by this login, in order (nil: an unknown URL).
        var routes: [MPinBackendDouble.Route?]
    }

    /// `double`: a backend double of the test's own (another origin, a D-TA elsewhere).
    init(timeout: Double = 10, plain: any Storage = MemoryStorage(), backendOrigin: String = "http://mpin.test",
         double: MPinBackendDouble? = nil) throws {
        backend = try double ?? MPinBackendDouble(origin: "http://mpin.test")
        self.plain = plain
        config.backend = backendOrigin
        config.timeout = timeout
    }

    /// A harness whose non-secure store is a FileStorage in a fresh private directory (removed
    /// by `removeFiles`), with alice registered and one successful login done, so that the
    /// account map and the kept settings are files.
    static func overFiles(file: StaticString = #filePath, line: UInt = #line) throws -> (LoginHarness, directory: String) {
        let directory = try makePrivateDirectory()
        let h = try LoginHarness(plain: FileStorage(directory: directory, options: .init(requiredOwner: geteuid())))
        try h.register(file: file, line: line)
        XCTAssertEqual(h.login(pin: "1234").outcome, .success, file: file, line: line)
        return (h, directory)
    }

    static func removeFiles(_ directory: String) { try? FileManager.default.removeItem(atPath: directory) }

    /// The network between the login and the backend; the backend itself unless a test puts
    /// something in between (several nodes, a failing link).
    var network: (any HTTPTransport)?

    var platform: TestContext { TestContext(transport: network ?? backend, secureStorage: secure, nonSecureStorage: plain) }

    /// Registers `identity` with `pin` through the SDK and maps `unixUser` to it; the
    /// backend's log is cleared afterwards.
    func register(unixUser: String = "alice", identity: String = "alice@example.org", pin: String = "1234",
                  file: StaticString = #filePath, line: UInt = #line) throws {
        let sdk = MPinSDK(context: platform)
        XCTAssertEqual(sdk.initialize(config: ["backend": config.backend]).code, .ok, file: file, line: line)
        let user = sdk.makeNewUser(id: identity)
        XCTAssertEqual(sdk.startRegistration(user).code, .ok, file: file, line: line)
        XCTAssertEqual(sdk.confirmRegistration(user).code, .ok, file: file, line: line)
        XCTAssertEqual(sdk.finishRegistration(user, pin: SecretBytes(copying: pin.utf8)).code, .ok, file: file, line: line)
        try AccountMap(storage: plain).set(.init(identity: identity, backend: config.backend), for: unixUser)
        backend.clearLog()
    }

    /// Runs one login of `unixUser` entering `pin` (nil: no PIN available).
    func login(_ unixUser: String = "alice", pin: String?) -> Run {
        let events = Collected<LoginEvent>()
        var asked = false
        let before = backend.log.count
        let login = Login(config: config, platform: platform) { events.append($0) }
        let started = ContinuousClock.now
        let (outcome, identity) = login.run(unixUser: unixUser) {
            asked = true
            return pin.map { SecretBytes(copying: $0.utf8) }
        }
        let elapsed = ContinuousClock.now - started
        return Run(outcome: outcome, identity: identity, events: events.all, pinAsked: asked, elapsed: elapsed,
                   routes: backend.log.dropFirst(before).map(\.route))
    }

    /// The kept client settings for the configured backend, as the store holds them.
    var cache: SettingsCache { SettingsCache(storage: plain, backend: config.backend, rpsPrefix: config.rpsPrefix) }

    /// Whether a settings-cache value exists at all (whatever its content).
    var cacheExists: Bool { ((try? plain.read(cache.name)) ?? nil) != nil }

    /// The hex tokens in the secure store (secrets a trace must never show).
    var storedTokens: [String] {
        guard let bytes = try? secure.read("tokens"), case .object(let members)? = try? JSONParser().parse(bytes) else { return [] }
        return members.compactMap { $0.value["token"]?.stringValue }
    }
}
