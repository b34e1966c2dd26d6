import MPinClient
import MPinCrypto
import MPinJSON
import MPinWire
#if canImport(Glibc)
import Glibc
#endif

/// A login approved on the user's own device (`mode = device`, PROTOCOL.md §5.7): the host
/// holds no token, only the Unix user's identity (`mpinctl link`). The login asks the backend
/// for an access number describing itself, tells the user, and polls, on the calling thread,
/// until a device approved it or `device_timeout` passed; then it checks that the identity that
/// approved is the Unix user's.
package struct DeviceLogin {
    package let config: LoginConfig
    package let platform: any PlatformContext
    /// How long to sleep between polls.
    package var pollInterval: Duration = .milliseconds(200)
    /// One line per step for the `debug` option; never a secret (no webOTT, no authOTT).
    package var note: ((String) -> Void)?

    package init(config: LoginConfig, platform: any PlatformContext) {
        self.config = config
        self.platform = platform
    }

    /// What the requester says about itself: host, Unix user, PAM service (and the remote host
    /// when there is one), within the description rules.
    package static func describe(host: String, unixUser: String, service: String, remoteHost: String = "") -> String {
        var text = "host \(host), user \(unixUser), service \(service)"
        if !remoteHost.isEmpty { text += ", from \(remoteHost)" }
        return AccessNumberDescription.sanitized(text)
    }

    /// The access number as the user reads it: `123-456-7`.
    package static func grouped(_ accessNumber: String) -> String {
        let digits = Array(accessNumber)
        guard digits.count == 7 else { return accessNumber }
        return String(digits[0..<3]) + "-" + String(digits[3..<6]) + "-" + String(digits[6])
    }

    /// Runs the login. `show` gets the access number and the description once, before the
    /// wait starts; it tells the user.
    package func run(unixUser: String, description: String,
                    show: (_ accessNumber: String, _ description: String) -> Void) -> (outcome: Login.Outcome, identity: String) {
        let started = MonotonicInstant.now
        let account: AccountMap.Account
        do {
            guard let a = try AccountMap(storage: platform.nonSecureStorage).account(for: unixUser) else { return (.unknownUser, "") }
            account = a
        } catch {
            return (.failed(error.description), "")
        }
        // Whom this host believes (docs/SECURITY.md §6.1, §6.2): the verdict key and the
        // registration pinned by `mpinctl link`. Without a pinned key, only an https backend
        // with a pinned CA may vouch for an approval; without a pinned registration, any
        // registration of the identity could approve, so the account must be linked again.
        if account.verdictKey.isEmpty, let refusal = config.unsignedVerdictRefusal(for: [account.backend]) {
            return (.failed(refusal), account.identity)
        }
        guard !account.mpinIdHash.isEmpty else {
            return (.failed("the link pins no registration; link the user again with mpinctl link --registration"), account.identity)
        }
        let waitUntil = started + .milliseconds(Int64(config.deviceTimeout * 1000))
        // Each request has the per-request budget (`timeout`); the whole login ends by the wait
        // plus one such budget for the last step.
        let deadline = waitUntil + .milliseconds(Int64(config.timeout * 1000))
        let sdk = MPinSDK(context: LoginPlatform(base: platform, transport: BoundedTransport(base: platform.transport, deadline: LoginDeadline(deadline))))
        for d in config.trustedDomains { sdk.addTrustedDomain(d) }
        // As a token login: without TLS that names the backend, no request leaves its origin.
        if !config.authenticatesByTLS(account.backend) { sdk.confine(toOriginOf: account.backend) }
        let initialized = sdk.initialize()
        guard initialized.isOK else { return (Login.outcome(initialized), account.identity) }
        let set = sdk.setBackend(account.backend, rpsPrefix: config.rpsPrefix)
        guard set.isOK else { return (Login.outcome(set), account.identity) }
        // This host's key (§5.8), so that the backend counts the request against this host's
        // own limits once it has certified the key (at the first approved login); without it
        // (the store is read-only, say) the request is anonymous, as the original SDK's.
        var host: MPinSDK.HostKey? = nil
        if let pair = try? HostKeyStore.loadOrCreate(platform.secureStorage) {
            host = MPinSDK.HostKey(secretKey: pair.secretKey, publicKey: pair.publicKey,
                                   certificate: HostKeyStore.certificate(for: account.backend, in: platform.nonSecureStorage),
                                   user: unixUser)
        }
        let (status, issued) = sdk.requestAccessNumber(description: description, signed: !account.verdictKey.isEmpty, host: host)
        guard status.isOK, let issued else { return (Login.outcome(status), account.identity) }
        note?("access number \(issued.accessNumber) issued for \(account.identity)")
        show(issued.accessNumber, description)

        var authOTT: String? = nil
        while authOTT == nil {
            let (s, ott) = sdk.pollAccessNumber(issued)
            guard s.isOK else { return (Login.outcome(s), account.identity) }
            authOTT = ott
            if authOTT != nil { break }
            let left = waitUntil - MonotonicInstant.now
            guard left > .zero else {
                return (.failed("timeout: no approval within \(Self.seconds(config.deviceTimeout)) s"), account.identity)
            }
            Self.sleep(min(pollInterval, left))
        }
        guard let authOTT else { return (.failed("no approval"), account.identity) }
        let (verdict, approval) = sdk.completeAccessNumberLogin(issued, authOTT: authOTT, expectedUserId: account.identity,
                                                                verdictKeyHex: account.verdictKey, hostKey: host?.publicKey ?? [])
        guard verdict.isOK, let approval else { return (Login.outcome(verdict), account.identity) }
        // A renewed certificate is kept (with a pinned verdict key, only one that key signed;
        // a forged one would merely make the next request anonymous).
        if let host, !approval.hostCertificate.isEmpty, approval.hostCertificate != host.certificate,
           account.verdictKey.isEmpty || Hex.decode(account.verdictKey).flatMap({
               HostCredential.certificateExpiry(approval.hostCertificate, hostKey: host.publicKey, serverKey: $0,
                                                now: WallClock.nowMillis() / 1000) }) != nil {
            try? HostKeyStore.setCertificate(approval.hostCertificate, for: account.backend, in: platform.nonSecureStorage)
        }
        // Byte for byte: Swift's == would take canonically equivalent spellings as equal.
        guard Array(approval.userId.utf8) == Array(account.identity.utf8) else {
            return (.failed("approved by another identity: \(approval.userId)"), account.identity)
        }
        guard let fingerprint = MPinIdentity.fingerprint(mpinIdHex: approval.mpinIdHex),
              fingerprint == account.mpinIdHash.lowercased() else {
            return (.failed("approved by a registration of \(account.identity) that this host did not link"), account.identity)
        }
        return (.success, account.identity)
    }

    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }

    /// Sleeps on the calling thread (no thread is started), resuming after a signal.
    static func sleep(_ d: Duration) {
        let (s, atto) = d.components
        var request = timespec(tv_sec: Int(s), tv_nsec: Int(atto / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) == -1, errno == EINTR { request = remaining }
    }
}
