package import Foundation
package import MPinWire

/// The state the RPS keeps between requests, as the handlers need it. `SQLiteStorage` (one
/// machine) and `PostgresStorage` (several nodes on one database) implement it with the same
/// contract: every method is one transaction, secrets that are only compared arrive and are
/// kept as hashes, and a method that reads then writes (the wrong-PIN counter, single-use
/// records) does so atomically against concurrent calls, on PostgreSQL also those of other
/// nodes. A new method needs both implementations (and a schema change, written once in
/// `StorageSchema.sharedMigrations`), and a test in `StorageContractTests`, which runs on both.
package protocol ServerStorage: MFAStorage, DVSStorage {
    /// Throws when the database cannot answer a query (`/health`).
    func healthCheck() async throws

    // MARK: Registration

    /// Whether the live registration of `mpinID` has this regOTT hash; nil when there is none.
    func registrationMatches(mpinID: String, regOTTHash: String, now: Date) async throws -> Bool?
    /// Stores (or replaces) a registration record and decides, by `mode`, whether it is active.
    /// With `regCodeHash` it is active at once if that registration code of the user is live,
    /// and the code is used up; otherwise nothing is stored (`.regCodeRefused`) and the wrong
    /// code is counted against the user's live codes in the same transaction, voiding nothing
    /// (`WrongRegCodeCounter`). In `.code` mode an activation code that is given and is not the
    /// user's stores nothing (`.activationCodeRefused`). At most
    /// `RegistrationPolicy.maxPendingPerUser` registrations are kept per user and
    /// `maxPendingPerSource` per `details.source` (when not empty), the oldest dropped.
    /// A registration sent again (same mpinId) keeps its first `created` and its first
    /// expiry: re-sending cannot keep it alive. `details` says who asked, for the admin.
    func saveRegistration(mpinID: String, userID: String, regOTTHash: String, activateKeyHash: String,
                          expires: Date, mode: VerificationMode, activateCodeHash: String?, regCodeHash: String?,
                          details: RegistrationDetails, now: Date) async throws -> RegistrationOutcome
    /// Activates the live registration with this activation key; false when there is none.
    func activateRegistration(mpinID: String, activateKeyHash: String, now: Date) async throws -> Bool
    /// The signature step: consumes an active registration into an issued identity.
    func consumeRegistration(mpinID: String, regOTTHash: String, now: Date) async throws -> ShareOutcome
    /// Whether a time permit may be issued for `mpinID`.
    func permitStatus(mpinID: String) async throws -> PermitOutcome

    // MARK: Offline logins

    /// Keeps the offline logins a host reported with a successful login of the user `userID`
    /// (docs/PROTOCOL.md §4.5.2): each entry once (a report sent again adds nothing), at most
    /// `OfflineLoginLog.maxPerUser` per user, the oldest dropped. Returns the entries that were new.
    func recordOfflineLogins(_ entries: [OfflineLoginEntry], userID: String) async throws -> [OfflineLoginEntry]

    // MARK: Authentication

    /// Stores a pass-2 result under its authOTT hash; with an access number (`wid` non-empty)
    /// only while that access number is live. Returns whether it was stored.
    @discardableResult
    func saveAuth(authOTTHash: String, mpinID: String, success: Bool, wid: String, otp: String?,
                  expires: Date, now: Date) async throws -> Bool
    /// Evaluates a stored pass-2 result once, applying the wrong-PIN counter in the same
    /// transaction, and opens `session` when the verdict is 200. nil when no usable record exists.
    func evaluate(authOTTHash: String, flow: AuthFlow, maxAttempts: Int, now: Date,
                  session: NewSession?, logoutData: LogoutData?) async throws -> AuthVerdict?
    /// Whether the browser has completed the access-number login of this authOTT.
    func browserReady(authOTTHash: String) async throws -> Bool
    /// Ends an access-number login; returns the logout data recorded for it.
    func finishMobile(authOTTHash: String) async throws -> MobileLogout?

    // MARK: Access numbers and sessions

    /// Stores a new access number with its requester's description; false if the number is already in use.
    func createAccessNumber(wid: String, webOTTHash: String, expires: Date, now: Date, description: String) async throws -> Bool
    /// The description and expiry of a live access number no device has approved yet (§5.7).
    func accessNumberDescription(wid: String, now: Date) async throws -> (description: String, expires: Date)?
    /// Who asked for an access number: its webOTT's hash and description, while it is live.
    func accessNumberRequester(wid: String) async throws -> (webOTTHash: String, description: String)?
    /// The stored WID (`ac:` + access code hash) of the web login a live access number stands
    /// for (MFA.md §5.4), or nil when the number is not a web login's.
    func webLogin(accessNumber: String, now: Date) async throws -> String?
    /// The description of the short code of the web login with this access code hash, if any.
    func webLoginDescription(accessCodeHash: String, now: Date) async throws -> String?
    /// The authOTT of a successful mobile login for this webOTT, if there is one yet.
    func pollAccessNumber(webOTTHash: String, now: Date) async throws -> String?
    /// Ends a session; false if there is none for this token and user.
    func endSession(tokenHash: String, userID: String, now: Date) async throws -> Bool

    /// Deletes expired short-lived records (`PurgeService` calls it periodically).
    func purgeExpired(now: Date) async throws
}

extension ServerStorage {
    package func evaluate(authOTTHash: String, flow: AuthFlow, maxAttempts: Int, now: Date) async throws -> AuthVerdict? {
        try await evaluate(authOTTHash: authOTTHash, flow: flow, maxAttempts: maxAttempts, now: now,
                           session: nil, logoutData: nil)
    }
}

/// Outcome of storing a registration.
package enum RegistrationOutcome: Sendable, Equatable {
    /// Stored; `replaced`: the identity `RegistrationDetails.replaces` named was deleted.
    case stored(active: Bool, replaced: Bool = false)
    /// The user is revoked.
    case refused
    /// The registration code is not a live code of the user; `wrongCodes`: the wrong codes now
    /// counted on the user's live codes (0 when the user has none). Nothing is voided.
    case regCodeRefused(wrongCodes: Int)
    /// `.code` mode, and the activation code given is not the user's: nothing was stored.
    case activationCodeRefused
}

/// Outcome of the signature step.
package enum ShareOutcome: Sendable, Equatable { case notFound, regOTTMismatch, notActive, issued(userID: String) }

/// Whether an identity may get time permits.
package enum PermitOutcome: Sendable, Equatable { case allowed, revoked }

/// The verdict on an authOTT: 200, 401 (wrong PIN) or 410 (blocked).
package struct AuthVerdict: Sendable, Equatable {
    package var status: Int
    package var userID: String
    package var mpinID: String
    package var otp: String?
    /// The authorization code issued by an access-code login (MFA.md §6), on 200 only.
    package var authorization: IssuedAuthorization? = nil
    /// This attempt's wrong PIN reached the limit and blocked the identity (metrics).
    package var blockedNow = false
    /// The browser's step of an access-number login, reporting the verdict of the mobile's step
    /// (already counted there).
    package var isReport = false
    /// The access number of such a report (device mode signs it, §4.5.1); "" otherwise.
    package var wid = ""
    /// On a counted wrong PIN (401): the wrong PINs the identity may still take, from the
    /// counter this verdict wrote (§4.5.1, "Attempts left"); nil otherwise.
    package var attemptsLeft: Int? = nil
}

/// Which final step evaluates an authOTT.
package enum AuthFlow: Sendable, Equatable {
    /// RPA `/authenticate` (no access number): single use, the record is deleted.
    case direct
    /// Mobile `/{p}/authenticate` with an access number: the verdict is kept for the browser.
    /// With an access code (MFA.md §6) the record is single use and a 200 issues `code`.
    case mobile(authOTT: String, code: NewAuthorizationCode)
}

/// A session to open in the verdict's transaction when it is 200 (the RPA's login): its token
/// goes into the authOTT's logout data, which an access-number login's mobile reads.
package struct NewSession: Sendable, Equatable {
    package var token: String
    package var tokenHash: String
    package var expires: Date

    package init(token: String, tokenHash: String, expires: Date) {
        self.token = token; self.tokenHash = tokenHash; self.expires = expires
    }
}

/// The logout data an access-number login hands to the waiting mobile.
package struct MobileLogout: Sendable, Equatable {
    package var userID: String
    package var token: String
}

/// Who started a registration, as `mpin-server user pending` shows it to the admin who must
/// choose which one to activate.
package struct RegistrationDetails: Sendable, Equatable {
    /// The device name the client sent (at most 64 characters kept), or "".
    package var deviceName: String
    /// The client's address.
    package var source: String
    /// An earlier identity of the same user (mpinId, lower-case hex) that this registration
    /// replaces (`RegisterRequest.replaces`: pam_mpin's enrolment of a user whose identity is
    /// blocked or revoked), or "". Deleted in the registration's transaction, and only when a
    /// right registration code of that user stands for the registration: the administrator's
    /// word that this is the user.
    package var replaces: String

    package init(deviceName: String?, source: String, replaces: String = "") {
        self.deviceName = String((deviceName ?? "").unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.prefix(64)
            .map(Character.init))
        self.source = source
        self.replaces = replaces
    }
}
