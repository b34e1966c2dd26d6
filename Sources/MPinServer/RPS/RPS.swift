import Foundation
import Logging
import MPinCrypto
import MPinWire

/// The Relying Party Service and M-Pin authentication server (PROTOCOL.md §3–§5), plus the
/// demo-RPA endpoints clients call (`/mpinAuthenticate`, `/logout`). Handlers take decoded
/// wire requests and return wire responses or throw a `ServerError`; the routes (RPSRoutes)
/// do the HTTP.
final class RPS: Sendable {
    let config: ServerConfig
    let storage: any ServerStorage
    let dta1: any DTAEndpoint
    /// Where clients fetch the second shares (`certivoxURL`): `/dta/` when embedded.
    let certivoxURL: String
    private let appKey: String
    /// The recombined server secret sQ, with its Miller-loop lines computed once.
    let serverSecret: PreparedG2
    let logger: Logger
    let spool: MailSpool
    let pass1Store = Pass1Store()
    let identityHashes = IdentityHashCache()
    let timePermits = TimePermitCache()
    let metrics: ServerMetrics
    /// Access-number look-ups (`GET accessnumber/{n}`) per minute: per client address, per number and overall (§5.1).
    let accessNumberLimit: LookupRateLimit
    /// Access numbers issued per requester and minute: per client address and description, so
    /// that logins failing for one user of a PAM host (which asks for every user of its own)
    /// do not use up the others' (docs/SECURITY.md §6.7).
    let issueLimit: AccessNumberRateLimit
    /// And per client address, ten times that, so that varied descriptions cannot issue
    /// numbers without bound.
    let issueHostLimit: AccessNumberRateLimit
    /// Requests that name no certified host key (§5.8), from any address, together: at most
    /// a hundred times the limit, so that varied addresses cannot issue numbers without bound.
    let issueAnonymousLimit: AccessNumberRateLimit
    /// Requests of certified hosts (§5.8): per host key and user, and per host key (ten
    /// times the limit); nobody else's requests count against them.
    let issueKeyLimit: AccessNumberRateLimit
    let issueKeyHostLimit: AccessNumberRateLimit
    /// The host signatures already counted, so that a captured request cannot be replayed.
    let hostSignatures = HostSignatureReplay()
    /// Signs the final verdicts of logins whose client sent a nonce (PROTOCOL.md §4.5.1).
    let verdictKey: VerdictKey
    /// Wrong registration codes per source and overall (docs/SECURITY.md §5).
    let regCodeLimit = RegCodeGuessLimit()
    /// Access numbers named in pass 2's WID, per identity and per address and minute, as
    /// codeStatus counts its look-ups of web logins' short codes.
    let widLookupLimit: AccessNumberRateLimit

    init(config: ServerConfig, appKey: String, dta1: any DTAEndpoint, dta2: any DTAEndpoint, certivoxURL: String,
         storage: any ServerStorage, spool: MailSpool, logger: Logger,
         metrics: ServerMetrics = ServerMetrics(), verdictKey: VerdictKey) async throws(ServerError) {
        self.config = config; self.appKey = appKey; self.dta1 = dta1; self.certivoxURL = certivoxURL
        self.storage = storage; self.spool = spool; self.logger = logger; self.metrics = metrics
        self.verdictKey = verdictKey
        let perMinute = config.accessNumberRequestsPerMinute ?? ServerConfig.defaultAccessNumberRequestsPerMinute
        accessNumberLimit = LookupRateLimit(perMinute: perMinute)
        issueLimit = AccessNumberRateLimit(perMinute: perMinute)
        issueHostLimit = AccessNumberRateLimit(perMinute: perMinute.multipliedReportingOverflow(by: 10).partialValue)
        issueAnonymousLimit = AccessNumberRateLimit(perMinute: perMinute.multipliedReportingOverflow(by: 100).partialValue)
        issueKeyLimit = AccessNumberRateLimit(perMinute: perMinute)
        issueKeyHostLimit = AccessNumberRateLimit(perMinute: perMinute.multipliedReportingOverflow(by: 10).partialValue)
        widLookupLimit = AccessNumberRateLimit(perMinute: perMinute)
        // Server secret = sum of both D-TAs' shares, requested with signed, expiring requests.
        let expires = WireTime.signatureExpires(Date().addingTimeInterval(60))
        let sig = WireSignature.sign(WireSignature.serverSecretMessage(appID: config.appID, expires: expires), key: appKey)
        let s1 = try await dta1.serverSecret(expires: expires, signature: sig)
        let s2 = try await dta2.serverSecret(expires: expires, signature: sig)
        guard let w1 = Hex.decode(s1.serverSecret), let w2 = Hex.decode(s2.serverSecret),
              let sum = try? MPin.recombineG2(w1, w2), let point = try? G2Point(bytes: sum) else {
            throw ServerError.internal("Server secret recombination failed")
        }
        serverSecret = PreparedG2(point)
    }

    private var prefix: String { "/" + config.rpsPrefix }

    // MARK: Registration

    /// The public time-permit cache (`timePermitsStorage`) always misses, so its URL is not
    /// advertised: clients then go straight to the second D-TA, saving a round trip per login.
    func clientSettings() throws(ServerError) -> ClientSettings {
        ClientSettings(
            requestOTP: config.requestOTP, mpinAuthServerURL: prefix, timePermitsURL: prefix + "/timePermit",
            useWebSocket: false, useNFC: false, setDeviceName: false, seedValue: try Secrets.randomHex(100),
            accessNumberDigits: 7, accessNumberURL: prefix + "/accessnumber", setupDoneURL: prefix + "/setupDone",
            timePermitsStorageURL: "", authenticateURL: "/mpinAuthenticate",
            certivoxURL: certivoxURL, accessNumberUseCheckSum: true, registerURL: prefix + "/user",
            appID: config.appID, cSum: 1, signatureURL: prefix + "/signature",
            getAccessNumberURL: prefix + "/getAccessNumber", mobileAuthenticateURL: prefix + "/authenticate",
            codeStatusURL: prefix + "/codeStatus", verdictKey: verdictKey.publicKeyHex)
    }

    /// `source`: the client's address, kept with the registration for the admin (`user pending`).
    func register(_ req: RegisterRequest, mpinIDSuffix: String?, source: String = "") async throws(ServerError) -> RegisterResponse {
        let userID = req.userId
        guard !userID.isEmpty, userID.utf8.count <= 256 else { throw ServerError.badRequest("BAD REQUEST. INVALID USERID") }
        // A host's registration asks to be marked so (docs/SECURITY.md §2); no other scope exists.
        guard req.scope == nil || req.scope == MPinIdentity.hostScope else { throw ServerError.badRequest("BAD REQUEST. INVALID SCOPE") }
        let now = Date()
        var mpinIDHex: String? = nil
        var regOTT: String? = nil
        if let suffix = mpinIDSuffix {
            guard let canonical = Hex.canonical(suffix), !canonical.isEmpty else {
                throw ServerError.badRequest("BAD REQUEST. INVALID MPIN ID")
            }
            let matches = try await run { try await self.storage.registrationMatches(
                mpinID: canonical, regOTTHash: Secrets.hash(req.regOTT.flatMap { Hex.canonical($0) } ?? ""), now: now) }
            switch matches {
            case .none: break  // expired or consumed: start afresh
            case .some(false): throw ServerError.badRequest("BAD REQUEST. INVALID REGOTT")
            case .some(true): mpinIDHex = canonical; regOTT = req.regOTT.flatMap { Hex.canonical($0) }
            }
        }
        if mpinIDHex == nil {
            guard let salt = try? SystemRandom.bytes(16) else { throw ServerError.internal("Random source failed") }
            let mobile = req.mobile ?? 0
            let built = MPinIdentity.build(userID: userID, mobile: mobile, issued: now, salt: salt, scope: req.scope)
            // An mpinId the authentication endpoints would refuse (escaped control characters
            // make it grow) is refused here, before anything is issued for it.
            guard built.count <= Self.maxMpinIDBytes else { throw ServerError.badRequest("BAD REQUEST. INVALID USERID") }
            mpinIDHex = Hex.encode(built)
        }
        let ott: String
        if let regOTT { ott = regOTT } else { ott = try Secrets.randomHex(16) }
        guard let mpinID = mpinIDHex else { throw ServerError.internal("Internal error") }
        let activateKey = WireSignature.sign(WireSignature.activationMessage(mpinIDHex: mpinID, regOTT: ott), key: appKey)
        let expires = now.addingTimeInterval(TimeInterval(config.verifyUserExpireSeconds))
        let regCodeHash = try await checkMFARegistration(req, now: now)
        // A registration code is judged only within the limits on wrong codes per source and
        // overall (docs/SECURITY.md §5): the try is counted first and given back when the code is
        // right.
        let guessSource = Pass1Store.sourceKey(source)
        if regCodeHash != nil {
            switch regCodeLimit.admit(guessSource, now: now) {
            case .admitted: break
            case .refused(let firstRefusal):
                if firstRefusal {
                    logger.notice("wrong registration codes throttled",
                                  metadata: ["source": "\(source)", "limit": "\(regCodeLimit.describe(guessSource))"])
                }
                throw ServerError.tooManyRequests
            }
        }
        let activateCodeHash = req.activateCode.flatMap { $0.isEmpty ? nil : Secrets.hash($0) }
        let replaces = req.replaces.flatMap { Hex.canonical($0) } ?? ""
        let outcome: RegistrationOutcome
        do {
            outcome = try await run { try await self.storage.saveRegistration(
                mpinID: mpinID, userID: userID, regOTTHash: Secrets.hash(ott), activateKeyHash: Secrets.hash(activateKey),
                expires: expires, mode: self.config.verification, activateCodeHash: activateCodeHash, regCodeHash: regCodeHash,
                details: RegistrationDetails(deviceName: req.deviceName, source: source, replaces: replaces), now: now) }
        } catch {
            if regCodeHash != nil { regCodeLimit.giveBack(guessSource, now: now) }
            throw error
        }
        if regCodeHash != nil, !outcome.isWrongRegCode { regCodeLimit.giveBack(guessSource, now: now) }
        switch outcome {
        case .refused:
            logger.info("registration refused", metadata: ["reason": "revoked"])
            throw ServerError.revoked
        case .regCodeRefused(let wrongCodes):
            // The admin sees who guesses: the address and how many wrong codes now stand
            // against the user's live codes (never the code, nor the user id).
            logger.notice("registration refused", metadata: ["reason": "registration code", "source": "\(source)",
                                                             "wrongCodesOnLiveCodes": "\(wrongCodes)"])
            throw ServerError.regCodeRefused
        case .activationCodeRefused:
            logger.info("registration refused", metadata: ["reason": "activation code", "source": "\(source)"])
            throw ServerError.activationCodeRefused
        case .stored(let active, let replaced):
            logger.info("registration stored", metadata: ["active": "\(active)"])
            // A right registration code is the administrator's word for this user: the identity
            // it replaces (theirs, named by the host that held it) went in the same transaction,
            // so its token is dead.
            if regCodeHash != nil, !replaces.isEmpty, replaces != mpinID {
                logger.notice("registration replaces an identity", metadata: ["deleted": "\(replaced)"])
            }
            metrics.recordRegistrationStarted()
            if !active && config.verification == .link {
                try spool.append(userID: userID, mpinIDHex: mpinID, activateKey: activateKey, expires: expires,
                                 base: config.publicBaseURL ?? "",
                                 details: RegistrationDetails(deviceName: req.deviceName, source: source))
            }
            return RegisterResponse(mpinId: mpinID, regOTT: ott, expireTime: WireTime.pythonISO(expires),
                                    nowTime: WireTime.pythonISO(now), active: active)
        }
    }

    /// RPA → RPS `POST /user/{mpinIdHex}` activation.
    func activate(mpinIDHex: String, _ req: ActivateRequest) async throws(ServerError) {
        guard let mpinID = Hex.canonical(mpinIDHex) else { throw ServerError.badRequest("Invalid M-Pin ID") }
        let ok = try await run { try await self.storage.activateRegistration(
            mpinID: mpinID, activateKeyHash: Secrets.hash(req.activateKey.lowercased()), now: Date()) }
        guard ok else { throw ServerError.unauthorized("No such registration") }
    }

    /// The activation link of `link` mode: `POST /mpinActivate?i={mpinIdHex}&s={activateKey}`, what the
    /// button of the page a GET shows posts (ActivationPage).
    func activateLink(mpinIDHex: String?, activateKey: String?) async throws(ServerError) {
        guard let mpinID = mpinIDHex.flatMap({ Hex.canonical($0) }), let key = activateKey.flatMap({ Hex.canonical($0) }) else {
            throw ServerError.badRequest("Invalid activation link")
        }
        let ok = try await run { try await self.storage.activateRegistration(
            mpinID: mpinID, activateKeyHash: Secrets.hash(key), now: Date()) }
        guard ok else { throw ServerError.unauthorized("Activation link expired or invalid") }
        logger.info("registration activated", metadata: ["via": "link"])
    }

    func signature(mpinIDHex: String, regOTT: String?) async throws(ServerError) -> SignatureResponse {
        guard let mpinBytes = Hex.decode(mpinIDHex), !mpinBytes.isEmpty else { throw ServerError.badRequest("M-Pin ID not found.") }
        guard let regOTT, let ott = Hex.canonical(regOTT) else { throw ServerError.badRequest("Missing argument regOTT") }
        let mpinID = Hex.encode(mpinBytes)
        let now = Date()
        let outcome = try await run { try await self.storage.consumeRegistration(
            mpinID: mpinID, regOTTHash: Secrets.hash(ott), now: now) }
        switch outcome {
        case .notFound, .regOTTMismatch: throw ServerError.badRequest("M-Pin ID not found.")
        case .notActive: throw ServerError.notActivated
        case .issued: metrics.recordRegistrationCompleted()
        }
        let params = clientSecretParams(hashMpinID: Hex.encode(MPin.hashID(mpinBytes)),
                                        mobile: MPinIdentity.parse(mpinBytes)?.mobile ?? 0, now: now)
        // The local D-TA verifies the same signed request it would get over HTTP.
        let share = try await dta1.clientSecret(params)
        logger.info("client-secret share issued")
        return SignatureResponse(clientSecretShare: share.clientSecret, params: params.query)
    }

    /// The signed, expiring request for a client-secret share of the identity whose SHA-256 is
    /// `hashMpinID` (§3.6): what the RPS sends its D-TA and the client the second one.
    func clientSecretParams(hashMpinID: String, mobile: Int, now: Date) -> ClientSecretParams {
        let expires = WireTime.signatureExpires(now.addingTimeInterval(TimeInterval(config.signatureExpireSeconds)))
        let sig = WireSignature.sign(WireSignature.clientSecretMessage(appID: config.appID, hashMpinID: hashMpinID,
                                                                       expires: expires), key: appKey)
        return ClientSecretParams(mobile: mobile, expires: expires, appID: config.appID, hashMpinID: hashMpinID, signature: sig)
    }

    // MARK: Time permits

    /// `verdictNonce`: a host's nonce (hex, `Verdict.nonceParameter`); a refusal then carries
    /// the signature of a "revoked" verdict over it, which the host needs before it records
    /// the identity as revoked.
    func timePermit(mpinIDHex: String, verdictNonce: String? = nil) async throws(ServerError) -> TimePermitResponse {
        guard mpinIDHex.utf8.count <= 2 * Self.maxMpinIDBytes, let mpinBytes = Hex.decode(mpinIDHex), !mpinBytes.isEmpty else {
            throw ServerError.badRequest("Invalid M-Pin ID")
        }
        let mpinID = Hex.encode(mpinBytes)
        let status = try await run { try await self.storage.permitStatus(mpinID: mpinID) }
        guard status == .allowed else {
            guard let nonce = Verdict.nonce(fromHex: verdictNonce),
                  let signature = verdictKey.sign(nonce: nonce, mpinIDHex: mpinID, userID: MPinIdentity.parse(mpinBytes)?.userID ?? "",
                                                  status: 410, context: Verdict.revokedContext) else {
                throw ServerError.timePermitRefused
            }
            throw ServerError.revokedVerdict(signature: signature)
        }
        let now = Date()
        let hashMpinID = Hex.encode(MPin.hashID(mpinBytes))
        let day = WireTime.day(now)
        let sig = WireSignature.sign(DTA.timePermitMessage(appID: config.appID, hashMpinID: hashMpinID, day: day), key: appKey)
        let share: String
        if let cached = timePermits.share(hashMpinID: hashMpinID, day: day) {
            share = cached
        } else {
            share = try await dta1.timePermit(hashMpinID: hashMpinID, signature: sig, day: day)
            // Kept for the rest of the day only if it is a point: a broken D-TA reply is passed
            // on once, not cached.
            if let bytes = Hex.decode(share), (try? G1Point(bytes: bytes)) != nil {
                timePermits.insert(share, hashMpinID: hashMpinID, day: day)
            }
        }
        return TimePermitResponse(date: Int(day), signature: sig, storageId: hashMpinID, timePermit: share)
    }

    // MARK: Helpers

    /// Runs a storage call, turning database failures into a logged 503 (never a crash).
    func run<T: Sendable>(_ body: @Sendable () async throws -> T) async throws(ServerError) -> T {
        do { return try await body() } catch let e as ServerError { throw e } catch {
            logger.error("storage failure", metadata: ["error": "\(type(of: error))"])
            metrics.recordDatabaseError()
            throw ServerError.unavailable("Storage unavailable")
        }
    }
}
