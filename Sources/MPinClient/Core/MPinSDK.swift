package import MPinJSON
package import MPinWire

/// The Milagro MFA client core (the SDK's `MPinSDK`), over a platform context for HTTP and
/// storage. Methods return an `MPinStatus` with the SDK's codes and semantics (the Milagro SDK API reference,
/// docs/PROTOCOL.md).
///
/// Not `Sendable`: its state (users, backend, headers) is unlocked, so one instance is used
/// from one thread at a time. Its calls block on HTTP; a program that runs them off its own
/// thread creates the instance there, or hands it over and waits for it back.
public final class MPinSDK {
    /// The SDK's version, which mpinctl and mpin report too.
    public static let version = "0.1.0"

    let context_: any PlatformContext
    var initialized = false
    var customHeaders: [String: String] = [:]
    var clientId = ""
    var trustedDomains: [String] = []
    /// The backend URL (trailing `/` trimmed) and its client settings, once set.
    var backend = ""
    var settings: ClientSettingsView? = nil
    /// Every known user, on every backend.
    var users: [MPinUser] = []

    /// A client core over `context`'s transport and stores; `initialize` loads the users.
    public init(context: any PlatformContext) { self.context_ = context }

    // MARK: Initialisation

    /// `Init(config, ctx, customHeaders)`: loads the users from storage and, when the config
    /// names a `backend` (or legacy `RPA_server`), sets it (with `rps_prefix`, default "rps").
    public func initialize(config: [String: String] = [:], customHeaders: [String: String] = [:]) -> MPinStatus {
        self.customHeaders = customHeaders
        let loaded = loadUsers()
        guard loaded.isOK else { return loaded }
        initialized = true
        if let server = config["backend"] ?? config["RPA_server"], !server.isEmpty {
            return setBackend(server, rpsPrefix: config["rps_prefix"] ?? "rps")
        }
        return .ok
    }

    /// `Destroy()`: forgets in-memory state (wiping secrets); storage is untouched.
    public func destroy() {
        for u in users { u.wipeShares(); u.wipePermits() }
        users = []
        settings = nil
        backend = ""
        initialized = false
    }

    /// `SetClientId(id)`: the OpenID client id sent with the requests that need one.
    public func setClientId(_ id: String) { clientId = id }
    /// `AddCustomHeaders(headers)`: headers added to every request (a later value replaces one
    /// of the same name).
    public func addCustomHeaders(_ headers: [String: String]) { customHeaders.merge(headers) { $1 } }
    /// `ClearCustomHeaders()`: no custom header any more.
    public func clearCustomHeaders() { customHeaders = [:] }

    /// After this, only https URLs in these domains (or below them) are contacted.
    public func addTrustedDomain(_ domain: String) {
        let lowered = domain.lowercased()
        let d = lowered.hasPrefix(".") ? String(lowered.dropFirst()) : lowered
        if !d.isEmpty, !trustedDomains.contains(d) { trustedDomains.append(d) }
    }
    /// `ClearTrustedDomains()`: any URL may be contacted again.
    public func clearTrustedDomains() { trustedDomains = [] }

    /// The origin (`scheme://host:port`) every request must go to, once `confine(toOriginOf:)`
    /// set it.
    var confinedOrigin: URLOrigin? = nil

    /// After this, every request (the client settings, and each URL they name) must go to
    /// `url`'s scheme, host and port, or fails with UNTRUSTED_DOMAIN_ERROR. A host whose backend
    /// TLS does not authenticate (plain http, or https without a CA of its own) calls it: client
    /// settings that whoever held the backend's port once sent cannot send its logins elsewhere
    /// (docs/SECURITY.md §3). False when `url` is not an absolute http(s) URL.
    @discardableResult
    package func confine(toOriginOf url: String) -> Bool {
        guard case .success(let origin) = URLOrigin.parse(url) else { return false }
        confinedOrigin = origin
        return true
    }

    /// Whether a host also sends its registrations' `scope` (`RegisterRequest.scope`): `mpinctl
    /// register` and pam_mpin's self-enrolment make tokens that log in to their host only. A
    /// backend that signs its verdicts must then mark the mpinId it issues, or the registration
    /// fails (a relay could have taken the request's mark off).
    package var registersHostTokens = false

    /// The mpinId (hex) of an earlier identity of the same user that the next registration with
    /// a registration code replaces (`RegisterRequest.replaces`): pam_mpin's enrolment of a
    /// user whose identity is blocked or revoked. Empty: none.
    package var replacesMpinIdHex = ""

    /// Offline logins to report with the next login's final step (pam_mpin's offline logins,
    /// docs/PROTOCOL.md §4.5.2): sent only by a registration that pinned the verdict key, bound
    /// to the login's verdict nonce. Nil: nothing to report.
    package var offlineReport: OfflineLoginReport? = nil
    /// After a login that sent `offlineReport` and was answered OK (signed): how many of its
    /// logins the backend recorded as new, from its acknowledgment signed over the login's
    /// nonce; nil without one (the report refused or rewritten on the way, or a backend that
    /// does not know reports).
    package internal(set) var offlineLoginsRecorded: Int? = nil

    // MARK: Backend

    /// Fetches client settings from `server` without keeping them.
    public func testBackend(_ server: String, rpsPrefix: String = "rps") -> MPinStatus {
        fetchSettings(server, rpsPrefix: rpsPrefix).status
    }

    /// Fetches and keeps client settings. Atomic: on failure the previous backend stays set.
    public func setBackend(_ server: String, rpsPrefix: String = "rps") -> MPinStatus {
        guard initialized else { return MPinStatus(.flowError, "the SDK is not initialised") }
        let (status, view) = fetchSettings(server, rpsPrefix: rpsPrefix)
        guard status.isOK, let view else { return status }
        backend = Self.trimmedBackend(server)
        settings = view
        return .ok
    }

    /// The client settings in use, relative URLs already resolved against the backend; nil
    /// before a backend is set. A short-lived process keeps them for `setBackend(_:cachedSettings:)`.
    package var clientSettingsDocument: JSONValue? { settings?.raw }

    /// Sets the backend from client settings an earlier `setBackend` fetched (see
    /// `clientSettingsDocument`), without a request. A long-lived app fetches them once; a PAM
    /// module is a new process per login and saves that round trip this way. The document
    /// must be an object naming the authentication server (`mpinAuthServerURL`).
    package func setBackend(_ server: String, cachedSettings: JSONValue) -> MPinStatus {
        guard initialized else { return MPinStatus(.flowError, "the SDK is not initialised") }
        let base = Self.trimmedBackend(server)
        guard case .success = URLOrigin.parse(base) else { return MPinStatus(.networkError, "\(server) is not an absolute URL") }
        guard case .object = cachedSettings, cachedSettings["mpinAuthServerURL"]?.stringValue != nil else {
            return MPinStatus(.flowError, "the cached client settings are not usable")
        }
        guard let view = ClientSettingsView(cachedSettings, backend: base) else {
            return MPinStatus(.flowError, "the cached client settings are not usable")
        }
        backend = base
        settings = view
        return .ok
    }

    func fetchSettings(_ server: String, rpsPrefix: String) -> (status: MPinStatus, view: ClientSettingsView?) {
        let base = Self.trimmedBackend(server)
        guard case .success = URLOrigin.parse(base) else { return (MPinStatus(.networkError, "\(server) is not an absolute URL"), nil) }
        var prefix = Substring(rpsPrefix).unicodeScalars
        while prefix.first == "/" { prefix = prefix.dropFirst() }
        while prefix.last == "/" { prefix = prefix.dropLast() }
        let url = base + "/" + (prefix.isEmpty ? "" : String(Substring(prefix)) + "/") + "clientSettings"
        switch request(.get, url) {
        case .failed(let s, _): return (s, nil)
        case .ok(let json, _):
            guard let view = ClientSettingsView(json, backend: base) else {
                return (MPinStatus(.responseParseError, "the client settings are not usable"), nil)
            }
            return (.ok, view)
        }
    }

    static func trimmedBackend(_ s: String) -> String {
        var t = Substring(s)
        while t.hasSuffix("/") { t = t.dropLast() }
        return String(t)
    }

    /// `backendKey` (§3.9): the backend URL without its scheme and trailing `/`.
    static func backendKey(_ backend: String) -> String {
        var s = trimmedBackend(backend)
        for scheme in ["https://", "http://"] where s.hasPrefix(scheme) { s.removeFirst(scheme.count) }
        return s
    }

    var currentBackendKey: String { Self.backendKey(backend) }

    /// The backend whose users the current one also serves (`serveUsers(of:)`), as a key.
    var sharedUsersBackendKey: String?

    /// Lets the current backend serve the users registered at `backend`: another node of the
    /// same deployment, sharing its registrations, to which a login fails over. Until the
    /// next call; `nil` ends it.
    package func serveUsers(of backend: String?) { sharedUsersBackendKey = backend.map(Self.backendKey) }

    /// `GetClientParam(key)`: a client-settings value as text, "" when unknown or not set.
    public func clientParam(_ key: String) -> String {
        guard let v = settings?.raw[key] else { return "" }
        switch v {
        case .string(let s): return s
        case .number(let n): return n
        case .bool(let b): return b ? "true" : "false"
        default: return v.serializedString
        }
    }

    // MARK: Users

    /// `MakeNewUser(id, deviceName)`: a user in state INVALID, not yet in the list.
    public func makeNewUser(id: String, deviceName: String = "") -> MPinUser { MPinUser(id: id, deviceName: deviceName) }

    /// `DeleteUser`: forgets the user and its token or regOTT. No server call.
    @discardableResult
    public func deleteUser(_ user: MPinUser) -> MPinStatus {
        guard let index = users.firstIndex(where: { $0 === user }) else {
            return MPinStatus(.flowError, "the user is not in the list")
        }
        users.remove(at: index)
        user.wipeShares(); user.wipePermits()
        removeDevicePermitShare(user)
        user.state = .invalid
        user.signingMpinIdHex = ""; user.signingPublicKeyHex = ""
        let status = saveUsers(removingSecretOf: user.mpinIdHex)
        user.mpinIdHex = ""
        user.regOTT = ""
        return status
    }

    /// Pins `publicKeyHex` as the key the user's verdicts must be signed with (PROTOCOL.md
    /// §4.5.1), for a registration made before keys were pinned: the administrator reads the
    /// key from the server itself (`mpin-server verdict-key`), never from the network. Only a
    /// key that decodes as a G1 point is taken.
    package func pinVerdictKey(_ user: MPinUser, publicKeyHex: String) -> MPinStatus {
        guard users.contains(where: { $0 === user }) else { return MPinStatus(.flowError, "the user is not in the list") }
        guard Verdict.isPublicKey(publicKeyHex) else { return MPinStatus(.flowError, "not a verdict key (130 hex digits, a G1 point)") }
        user.verdictKeyHex = publicKeyHex.lowercased()
        return saveUsers()
    }

    /// Whether a user with this id exists on the current backend.
    public func isUserExisting(_ id: String) -> Bool {
        users.contains { $0.id == id && $0.backendKey == currentBackendKey }
    }

    /// The users of the current backend (FLOW_ERROR with no backend set).
    public func listUsers() -> (MPinStatus, [MPinUser]) {
        guard initialized, settings != nil else { return (MPinStatus(.flowError, "no backend is set"), []) }
        return (.ok, users.filter { $0.backendKey == currentBackendKey })
    }

    /// `ListUsers(users, backend)`: the users registered with `backend`.
    public func listUsers(backend: String) -> (MPinStatus, [MPinUser]) {
        guard initialized else { return (MPinStatus(.flowError, "the SDK is not initialised"), []) }
        let key = Self.backendKey(backend)
        return (.ok, users.filter { $0.backendKey == key })
    }

    /// `ListAllUsers(users)`: the users of every backend.
    public func listAllUsers() -> (MPinStatus, [MPinUser]) {
        guard initialized else { return (MPinStatus(.flowError, "the SDK is not initialised"), []) }
        return (.ok, users)
    }

    /// `ListBackends(backends)`: the backends the users are registered with, once each.
    public func listBackends() -> (MPinStatus, [String]) {
        guard initialized else { return (MPinStatus(.flowError, "the SDK is not initialised"), []) }
        var keys: [String] = []
        for u in users where !keys.contains(u.backendKey) { keys.append(u.backendKey) }
        return (.ok, keys)
    }

    /// The user must be this very object, in the list, on the current backend, in a state from `allowed`.
    func check(_ user: MPinUser, in allowed: [MPinUserState]) -> MPinStatus? {
        guard initialized, settings != nil else { return MPinStatus(.flowError, "no backend is set") }
        guard users.contains(where: { $0 === user }) else { return MPinStatus(.flowError, "the user is not in the list") }
        guard user.backendKey == currentBackendKey || user.backendKey == sharedUsersBackendKey else {
            return MPinStatus(.flowError, "the user belongs to another backend (\(user.backendKey))")
        }
        guard allowed.contains(user.state) else {
            return MPinStatus(.flowError, "not allowed for a user in state \(user.state.rawValue)")
        }
        return nil
    }
}

/// Client settings with relative URLs resolved (§3.1): top-level strings starting with `/`
/// are prefixed with the backend; `wss://`/`ws://` become `https://`/`http://`. `raw` keeps
/// every member (GetClientParam, the settings cache), `wire` is the typed, leniently read
/// message the flows use.
struct ClientSettingsView {
    let raw: JSONValue
    let wire: ClientSettings

    /// nil only if the lenient read refuses the document, which it does not for an object.
    init?(_ json: JSONValue, backend: String) {
        raw = Self.resolved(json, backend: backend)
        guard let wire = WireCoding.lenient(ClientSettings.self, from: raw) else { return nil }
        self.wire = wire
    }

    private static func resolved(_ json: JSONValue, backend: String) -> JSONValue {
        guard case .object(let members) = json else { return .object([]) }
        return .object(members.map { m in
            guard case .string(let s) = m.value else { return m }
            if s.utf8.first == UInt8(ascii: "/") { return (m.key, .string(backend + s)) }
            // Only strings that can hold a WebSocket URL pay for the (generic, slow) replacing.
            guard s.utf8.contains(UInt8(ascii: ":")) else { return m }
            return (m.key, .string(s.replacingEvery("wss://", with: "https://").replacingEvery("ws://", with: "http://")))
        })
    }

    /// Permits are used unless the server says otherwise (§3.1).
    var usePermits: Bool { wire.usePermits ?? true }

    /// An MFA-platform URL: the member `key` when the server names one, else `name` beside
    /// `registerURL` (`/{p}/user` → `/{p}/name`; docs/MFA.md §8, §14).
    func url(_ key: String, besideRegisterURL name: String) -> String {
        if case .string(let url)? = raw[key], !url.isEmpty { return url }
        var base = Substring(wire.registerURL)
        while let last = base.last, last != "/" { base = base.dropLast() }
        return String(base) + name
    }
}

extension String {
    /// Every occurrence of `target` replaced by `replacement`, compared byte for byte in UTF-8.
    /// Written here rather than taken from `_StringProcessing` (`replacing(_:with:)`): that
    /// module and its regex parser add about a megabyte to the statically linked PAM module.
    func replacingEvery(_ target: String, with replacement: String) -> String {
        let bytes = Array(utf8), pattern = Array(target.utf8)
        guard !pattern.isEmpty, bytes.count >= pattern.count else { return self }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            if i + pattern.count <= bytes.count, bytes[i..<(i + pattern.count)].elementsEqual(pattern) {
                out.append(contentsOf: replacement.utf8)
                i += pattern.count
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
