import Foundation

/// How a registration's identity is verified before its client-secret share is issued.
package enum VerificationMode: String, Codable, Sendable {
    /// Every registration is active at once (demo; `init --auto-activate`).
    case auto
    /// The user must present the one-time code printed by `mpin-server user add`
    /// (StartRegistration's `activateCode`), or be activated by `mpin-server user activate`.
    case code
    /// Like the original demo RPA's e-mail: an activation link is appended to `DIR/mail.spool`
    /// (0600) for an administrator to forward; opening it activates the registration.
    case link
}

/// The deployment's settings, stored as `config.json` in the data directory. Holds no secret:
/// the app key and the master-secret shares live in their own 0600 files.
package struct ServerConfig: Codable, Sendable, Equatable {
    /// Application identifier (hex), the `appID` of client settings and D-TA requests.
    package var appID: String
    /// Path prefix of the public RPS endpoints (`rps` → `/rps/user`, …).
    package var rpsPrefix: String = "rps"
    package var verification: VerificationMode = .auto
    /// Failed authentications after which an identity is blocked (410).
    package var maxInvalidLoginAttempts: Int = 3
    /// Lifetime of a registration record (regOTT) in seconds.
    package var verifyUserExpireSeconds: Int = 3600
    /// Lifetime of the signed parameters for the second client-secret share.
    package var signatureExpireSeconds: Int = 60
    /// Lifetime of pass-1 state (y) in seconds.
    package var pass1ExpireSeconds: Int = 15
    /// Lifetime of an authOTT in seconds.
    package var authOTTExpireSeconds: Int = 60
    /// Displayed access-number lifetime (`ttlSeconds`) and the extra validity after it.
    package var accessNumberExpireSeconds: Int = 60
    package var accessNumberExtendValiditySeconds: Int = 5
    /// `getAccessNumber` (and access-number lookups) allowed per client address and minute;
    /// beyond it 429. nil (also for config files made before this key): 30.
    package var accessNumberRequestsPerMinute: Int? = nil
    static let defaultAccessNumberRequestsPerMinute = 30
    /// How long the mobile access-number authentication waits for the browser.
    package var mobileWaitSeconds: Double = 10
    /// Path the mobile client posts its logout data to.
    package var logoutURL: String = "/logout"
    /// Advertised in client settings (informative for the SDK).
    package var requestOTP: Bool = false
    /// Lifetime of an OTP issued at pass 2; the demo-RPA step then returns it (expireTime,
    /// ttlSeconds, nowTime) as the original demo RPA does with its requestOTP option on.
    /// nil (also for data directories made before this option) returns `someUserData` only,
    /// as the recorded server did.
    package var otpTTLSeconds: Int? = 60
    /// Base URL put in front of activation links (`link` mode); relative links when nil.
    package var publicBaseURL: String? = nil
    /// The MFA platform's settings (MFA.md §1.1); absent in older config files.
    package var mfaSettings: MFASettings? = nil
    /// Largest accepted request body in bytes.
    package var maxBodyBytes: Int = 64 * 1024
    /// Connections open at once (nil: 4,096), kept below the descriptor limit by an eighth of it;
    /// at the cap the connection that has waited longest for its client is closed
    /// (docs/SECURITY.md §5).
    package var maxConnections: Int? = nil
    /// Seconds a client may take for a request's head (nil: 10), for its body after the head
    /// (nil: 10), and a kept-alive connection may stay idle (nil: 30).
    package var headerTimeoutSeconds: Double? = nil
    package var bodyTimeoutSeconds: Double? = nil
    package var idleTimeoutSeconds: Double? = nil
    /// The server's TLS certificate (PEM, leaf first) and private key (PEM, mode 0600), absolute
    /// or relative to the data directory. With both set `serve` speaks HTTPS only; with neither,
    /// plain HTTP. `serve --tls-cert/--tls-key` take precedence.
    package var tlsCertificate: String? = nil
    package var tlsKey: String? = nil
    /// Whether `serve` may speak plain HTTP on an address other than loopback (nil: no; it
    /// refuses to start). Only for a network where nothing else listens in (docs/SECURITY.md §5).
    package var allowPlainHTTP: Bool? = nil
    /// Where the server's state lives: nil or `sqlite` for `DIR/mpin.sqlite` (one machine),
    /// `postgresql://USER@HOST:PORT/DB` for a PostgreSQL database that several nodes share
    /// (`init --database`). A password, if the database needs one, is read from
    /// `DIR/database.password` (0600), never from this file.
    package var database: String? = nil

    package init(appID: String) { self.appID = appID }

    /// The first setting outside the range the server can work with (lifetimes up to ten years,
    /// so that millisecond and date arithmetic cannot overflow), nil when all are fine.
    var outOfRangeSetting: String? {
        let decade = 10 * 365 * 86_400
        let lifetimes: [(String, Int?)] = [
            ("verifyUserExpireSeconds", verifyUserExpireSeconds), ("signatureExpireSeconds", signatureExpireSeconds),
            ("pass1ExpireSeconds", pass1ExpireSeconds), ("authOTTExpireSeconds", authOTTExpireSeconds),
            ("accessNumberExpireSeconds", accessNumberExpireSeconds),
            ("accessNumberExtendValiditySeconds", accessNumberExtendValiditySeconds), ("otpTTLSeconds", otpTTLSeconds),
        ]
        for (key, value) in lifetimes { if let value, !(0...decade).contains(value) { return key } }
        if !(1...1_000).contains(maxInvalidLoginAttempts) { return "maxInvalidLoginAttempts" }
        if let n = accessNumberRequestsPerMinute, !(1...1_000_000).contains(n) { return "accessNumberRequestsPerMinute" }
        if !(mobileWaitSeconds.isFinite && (0...600).contains(mobileWaitSeconds)) { return "mobileWaitSeconds" }
        if !(1_024...(16 << 20)).contains(maxBodyBytes) { return "maxBodyBytes" }
        if let n = maxConnections, !(1...1_000_000).contains(n) { return "maxConnections" }
        for (key, value) in [("headerTimeoutSeconds", headerTimeoutSeconds), ("bodyTimeoutSeconds", bodyTimeoutSeconds),
                             ("idleTimeoutSeconds", idleTimeoutSeconds)] {
            if let value, !(value.isFinite && (0.1...3_600).contains(value)) { return key }
        }
        if let key = mfa.outOfRangeSetting { return key }
        if let database, database != "sqlite", PostgresURL(database) == nil { return "database" }
        return nil
    }
}

/// Lifetimes and names of the MFA platform (MFA.md §1.1); every member optional so that a
/// config file names only what it changes.
package struct MFASettings: Codable, Sendable, Equatable {
    package var accessCodeTTLSeconds: Int?
    package var authzCodeTTLSeconds: Int?
    package var idTokenTTLSeconds: Int?
    package var regCodeTTLSeconds: Int?
    package var customerName: String?
    package var customerLogoURL: String?
    package init() {}
}

/// The MFA settings with their defaults applied.
struct MFAConfig: Sendable {
    var accessCodeTTLSeconds = 300
    var authzCodeTTLSeconds = 60
    var idTokenTTLSeconds = 600
    var regCodeTTLSeconds = 600
    var customerName = "mpin-server"
    var customerLogoURL = ""

    var outOfRangeSetting: String? {
        for (key, value) in [("accessCodeTTLSeconds", accessCodeTTLSeconds), ("authzCodeTTLSeconds", authzCodeTTLSeconds),
                             ("idTokenTTLSeconds", idTokenTTLSeconds), ("regCodeTTLSeconds", regCodeTTLSeconds)]
        where !(1...86_400).contains(value) { return key }
        return nil
    }
}

extension ServerConfig {
    /// Whether `database` names a PostgreSQL database rather than the SQLite file.
    var usesPostgres: Bool { database != nil && database != "sqlite" }

    var mfa: MFAConfig {
        var c = MFAConfig()
        if let s = mfaSettings {
            if let v = s.accessCodeTTLSeconds { c.accessCodeTTLSeconds = v }
            if let v = s.authzCodeTTLSeconds { c.authzCodeTTLSeconds = v }
            if let v = s.idTokenTTLSeconds { c.idTokenTTLSeconds = v }
            if let v = s.regCodeTTLSeconds { c.regCodeTTLSeconds = v }
            if let v = s.customerName { c.customerName = v }
            if let v = s.customerLogoURL { c.customerLogoURL = v }
        }
        return c
    }
}
