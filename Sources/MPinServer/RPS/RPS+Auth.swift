import Foundation
import Logging
import MPinCrypto
import MPinWire

/// A response status with a JSON body.
struct Reply<Body: Encodable & Sendable>: Sendable {
    var status: Int
    var body: Body
}

extension RPS {
    // MARK: Pass 1 and pass 2 (§4.3–§4.4)

    /// `source` is the client's address: pending pass 1s are bounded per address, so that a
    /// flood from one address does not keep anyone else from logging in.
    func pass1(_ req: Pass1Request, source: String = "") async throws(ServerError) -> Pass1Response {
        let mpinBytes = try Self.mpinID(req.mpin_id)
        guard let u = Hex.decode(req.U, length: 65), (try? G1Point(bytes: u)) != nil else {
            throw ServerError.invalidData("U is not a G1 point")
        }
        guard let ut = Hex.decode(req.UT, length: 65), (try? G1Point(bytes: ut)) != nil else {
            throw ServerError.invalidData("UT is not a G1 point")
        }
        guard let y = try? SystemRandom.scalar() else { throw ServerError.internal("Random source failed") }
        let now = Date()
        let expires = now.addingTimeInterval(TimeInterval(config.pass1ExpireSeconds))
        switch pass1Store.save(key: MPin.hashID(mpinBytes), u: u, ut: ut, y: y, source: source, expires: expires, now: now) {
        case .saved(let id): return Pass1Response(y: Hex.encode(y), pass1Id: Hex.encode(id))
        case .sourceFull:
            logger.notice("pass 1 refused", metadata: ["reason": "too many pending from one address"])
            throw ServerError.tooManyRequests
        case .full: throw ServerError.unavailable("Too many pending authentications")
        }
    }

    /// `source`: the client's address; a pass 2 that names no pass 1 is matched only against
    /// that address's.
    func pass2(_ req: Pass2Request, source: String = "") async throws(ServerError) -> Pass2Response {
        let mpinBytes = try Self.mpinID(req.mpin_id)
        guard let v = Hex.decode(req.V, length: 65), (try? G1Point(bytes: v)) != nil else {
            throw ServerError.invalidData("V is not a G1 point")
        }
        var wid = req.WID == "0" ? "" : req.WID
        guard wid.utf8.count <= 64 else { throw ServerError.invalidData("WID too long") }
        // A token registered for its host's logins approves nothing else: the mark is in the
        // mpinId the proof is made for, so a relay that writes a login code into WID cannot
        // turn a host login into a web login (docs/SECURITY.md §2).
        if !wid.isEmpty, MPinIdentity.isHostScoped(mpinBytes) {
            logger.notice("pass 2 refused", metadata: ["reason": "a host registration names an access number or code"])
            throw ServerError.invalidData("This registration logs in to its host only")
        }
        let now = Date()
        // An access code (MFA.md §6) is recorded by its hash; "0" (no WID) costs nothing more.
        // An access number that stands for a web login (MFA.md §5.4) is recorded as its access code.
        if !wid.isEmpty, AccessCode.isAccessCode(wid) {
            wid = AccessCode.storedPrefix + Secrets.hash(wid)
        } else if AccessNumber.isValid(wid) {
            // A web login's short code is looked up as codeStatus looks it up: counted per
            // identity and per address, so that no registered identity can sweep the 10^7 codes
            // for a waiting browser (login CSRF).
            guard widLookupLimit.admit(Hex.encode(MPin.hashID(mpinBytes))), widLookupLimit.admit("address " + source) else {
                logger.notice("pass 2 refused", metadata: ["reason": "too many access-number look-ups"])
                throw ServerError.tooManyRequests
            }
            let number = wid
            if let web = try await run({ try await self.storage.webLogin(accessNumber: number, now: now) }) { wid = web }
        }
        let mpinID = Hex.encode(mpinBytes)
        // The pass 1 this pass 2 belongs to: the one it names (mpin-server's clients), else each
        // pending one of the identity (the original SDK names none). Found nothing: refused and
        // not counted, so that a concurrent login or a flood cannot turn a right PIN into a
        // wrong one (docs/SECURITY.md §6.5).
        var named: [UInt8]? = nil
        if let text = req.pass1Id {
            guard let id = Hex.decode(text, length: 16) else { throw ServerError.invalidData("pass1Id is not 16 bytes of hex") }
            named = id
        }
        // The identity's digest keys both the pass-1 store and the hash cache: computed once.
        let identity = MPin.hashID(mpinBytes)
        let pending = pass1Store.candidates(key: identity, id: named, source: source, now: now)
        guard !pending.isEmpty else { throw ServerError.noPass1State }
        var success = false
        var consumed: [UInt8]? = named
        for p1 in pending where verify(mpinID: mpinBytes, digest: identity, u: p1.u, ut: p1.ut, y: p1.y, v: v, now: now) {
            success = true
            consumed = p1.id
            break
        }
        // Pass-1 state is consumed here: a replayed (or concurrent second) pass 2 finds it gone.
        // An unnamed failure consumes nothing: it cannot tell which login it was.
        if let consumed, !pass1Store.take(key: identity, id: consumed) { throw ServerError.noPass1State }
        let otp = req.OTP ? try digits(6) : nil
        // A client's verdict nonce goes into the authOTT, so that the final step signs over the
        // nonce of the proof it answers (§4.5.1): the record is found by the whole authOTT's
        // hash, so a captured authOTT cannot be presented with another nonce.
        guard let random = try? SystemRandom.bytes(Verdict.ottRandomSize) else { throw ServerError.internal("Random source failed") }
        let authOTT = Verdict.oneTimeToken(random: random, nonce: Verdict.nonce(fromHex: req.verdictNonce))
        let expires = now.addingTimeInterval(TimeInterval(config.authOTTExpireSeconds))
        let recordedWID = wid, verified = success
        _ = try await run { try await self.storage.saveAuth(authOTTHash: Secrets.hash(authOTT), mpinID: mpinID, success: verified,
                                                        wid: recordedWID, otp: otp, expires: expires, now: now) }
        return Pass2Response(authOTT: authOTT, otp: otp)
    }

    /// Longest mpinId accepted (the server issues ~100-byte ones): bounds what a client can make
    /// the in-memory pass-1 and hash caches hold.
    static let maxMpinIDBytes = 1024

    /// The mpinId of a pass request, decoded and bounded.
    static func mpinID(_ hex: String) throws(ServerError) -> [UInt8] {
        guard hex.utf8.count <= 2 * maxMpinIDBytes else { throw ServerError.invalidData("mpin_id too long") }
        guard let bytes = Hex.decode(hex), !bytes.isEmpty else {
            throw ServerError.invalidData("mpin_id: Non-hexadecimal digit found")
        }
        return bytes
    }

    /// MPIN_SERVER_2 for today, and yesterday during the first UTC hour (§4.7).
    /// `digest`: the identity's `MPin.hashID`, the hash cache's key.
    private func verify(mpinID: [UInt8], digest: [UInt8], u: [UInt8], ut: [UInt8], y: [UInt8], v: [UInt8], now: Date) -> Bool {
        let today = WireTime.day(now)
        for date in WireTime.isGraceHour(now) ? [today, today - 1] : [today] {
            let cached = identityHashes.lookup(date: date, digest: digest)
            guard let (hid, htid) = cached ?? (try? MPin.server1(date: date, mpinID: mpinID)) else { return false }
            let r = MPin.server2(date: date, hid: hid, htid: htid, y: y, serverSecret: serverSecret, u: u, ut: ut, v: v)
            if r == .ok {
                // Only identities that just proved themselves are cached: a client cannot fill
                // the cache with made-up mpinIds.
                if cached == nil { identityHashes.insert(date: date, digest: digest, hid: hid, htid: htid) }
                return true
            }
            if r != .badPIN { return false }
        }
        return false
    }

    private func digits(_ n: Int) throws(ServerError) -> String {
        guard let d = Secrets.randomDigits(n) else { throw ServerError.internal("Random source failed") }
        return d
    }

    // MARK: Final step (§4.5, §5.4)

    /// Demo RPA `POST /mpinAuthenticate`: evaluates the authOTT through the RPS, answers with
    /// the RPS status code.
    /// `source`: the client's address, kept with offline logins it reports (§4.5.2).
    func rpaAuthenticate(_ req: AuthenticateRequest, source: String = "") async throws(ServerError) -> Reply<RPAAuthenticateResponse> {
        guard let ott = req.mpinResponse.authOTT.flatMap({ Hex.canonical($0) }), !ott.isEmpty else {
            throw ServerError.badRequest("BAD REQUEST. authOTT argument missing")
        }
        // The RPA's session opens in the verdict's transaction.
        let token = try Secrets.randomHex(32)
        let session = NewSession(token: token, tokenHash: Secrets.hash(token), expires: Date().addingTimeInterval(3600))
        let verdict = try await evaluateDirect(authOTT: ott, session: session)
        logger.info("authentication", metadata: ["status": "\(verdict.status)", "flow": "rpa"])
        var timing: OTPTiming? = nil
        if verdict.status == 200, verdict.otp != nil, let ttl = config.otpTTLSeconds, ttl > 0 {
            let now = WireTime.milliseconds(Date())
            timing = OTPTiming(expireTime: now + Int64(ttl) * 1000, ttlSeconds: ttl, nowTime: now)
        }
        // The verdict is signed over the client's nonce (§4.5.1): a host that pinned this
        // server's key believes nothing else, whoever answers on the backend's address.
        let signature = verdictKey.sign(nonce: Verdict.nonce(inOneTimeToken: ott), mpinIDHex: verdict.mpinID,
                                        userID: verdict.userID, status: verdict.status, context: Verdict.tokenContext)
        let attempts = attemptsLeft(verdict, nonce: Verdict.nonce(inOneTimeToken: ott))
        var recorded: SignedCount? = nil
        if verdict.status == 200, let report = req.offlineLogins {
            recorded = await recordOfflineLogins(report, verdict: verdict, authOTT: ott, source: source)
        }
        return Reply(status: verdict.status,
                     body: RPAAuthenticateResponse(someUserData: verdict.status == 200
                         ? "This will be handled by onSuccessLogin handler." : "Authentication failed", otpTiming: timing,
                         verdictSignature: signature, attempts: attempts, offlineLogins: recorded))
    }

    /// RPA → RPS private `POST /authenticate`.
    func tokenAuthenticate(_ req: TokenAuthenticateRequest) async throws(ServerError) -> Reply<TokenAuthenticateResponse> {
        guard let ott = Hex.canonical(req.authOTT), !ott.isEmpty else { throw ServerError.badRequest("Invalid authOTT") }
        // The RPA's logout data goes to a waiting mobile (access-number login), in the verdict's transaction.
        let v = try await evaluateDirect(authOTT: ott, logoutData: req.logoutData)
        let message = v.status == 200 ? "Authentication successful" : (v.status == 410 ? "Blocked." : "Wrong PIN.")
        let signature = try await verdictSignature(v, authOTT: ott, webOTT: req.webOTT)
        var certificate: String? = nil
        if req.hostKey != nil { certificate = try await hostCertificate(v, webOTT: req.webOTT, hostKey: req.hostKey) }
        let attempts = v.wid.isEmpty ? attemptsLeft(v, nonce: Verdict.nonce(inOneTimeToken: ott)) : nil
        return Reply(status: v.status, body: TokenAuthenticateResponse(userId: v.userID, mpinId: v.mpinID,
                                                                       status: v.status, message: message, otp: v.otp,
                                                                       verdictSignature: signature, hostCertificate: certificate,
                                                                       attempts: attempts))
    }

    /// After a wrong PIN (401) of a login that bound a nonce: the wrong PINs its identity may
    /// still take, as the verdict's own counter update left them (`FinalStepPlan`), signed over
    /// that nonce, so that a host can tell its user before the last one is spent (pam_mpin
    /// stops its caller's retries at one left).
    private func attemptsLeft(_ v: AuthVerdict, nonce: [UInt8]?) -> SignedCount? {
        guard v.status == 401, let nonce, let left = v.attemptsLeft, !v.userID.isEmpty, !v.mpinID.isEmpty,
              let signature = verdictKey.sign(nonce: nonce, mpinIDHex: v.mpinID, userID: v.userID, status: 401,
                                              context: Verdict.attemptsLeftContext(left)) else { return nil }
        return SignedCount(count: left, signature: signature)
    }

    /// The signature of a verdict the private `/authenticate` gives (§4.5.1). A token-mode
    /// record: over the nonce its authOTT carries. An approval of an access number (device
    /// mode): only for the requester that presents the number's webOTT, over the nonce in it,
    /// with the number and its description; anyone else gets no signature.
    private func verdictSignature(_ v: AuthVerdict, authOTT: String, webOTT: String?) async throws(ServerError) -> String? {
        guard !v.wid.isEmpty else {
            return verdictKey.sign(nonce: Verdict.nonce(inOneTimeToken: authOTT), mpinIDHex: v.mpinID, userID: v.userID,
                                   status: v.status, context: Verdict.tokenContext)
        }
        guard let web = webOTT.flatMap({ Hex.canonical($0) }), let nonce = Verdict.nonce(inOneTimeToken: web) else { return nil }
        let wid = v.wid
        guard let requester = try await run({ try await self.storage.accessNumberRequester(wid: wid) }),
              Secrets.equal(requester.webOTTHash, Secrets.hash(web)) else { return nil }
        return verdictKey.sign(nonce: nonce, mpinIDHex: v.mpinID, userID: v.userID, status: v.status,
                               context: Verdict.deviceContext(accessNumber: wid, description: requester.description))
    }

    /// The 410 of a final step that answers with an error body (the mobile and MFA endpoints),
    /// signed when the login bound a nonce, so that a host with a pinned key believes it.
    func blocked(_ v: AuthVerdict, authOTT: String) -> ServerError {
        guard let signature = verdictKey.sign(nonce: Verdict.nonce(inOneTimeToken: authOTT), mpinIDHex: v.mpinID,
                                              userID: v.userID, status: 410, context: Verdict.tokenContext) else { return .blocked }
        return .blockedVerdict(signature: signature)
    }

    private func evaluateDirect(authOTT: String, session: NewSession? = nil,
                                logoutData: LogoutData? = nil) async throws(ServerError) -> AuthVerdict {
        let max = config.maxInvalidLoginAttempts
        guard let v = try await run({ try await self.storage.evaluate(
            authOTTHash: Secrets.hash(authOTT), flow: .direct, maxAttempts: max, now: Date(), session: session,
            logoutData: logoutData) }) else {
            metrics.recordRefusedLogin()
            throw ServerError.expired("Expired authentication request")
        }
        if !v.isReport { metrics.recordVerdict(status: v.status, blockedNow: v.blockedNow) }
        return v
    }

    /// Mobile `POST /{p}/authenticate` (access-number flow): 412 without a live access number,
    /// 401/410 for a failed verification, else waits for the browser and returns logout data.
    /// With an access code (MFA.md §6) it answers at once with an authorization code.
    func mobileAuthenticate(_ req: AuthenticateRequest) async throws(ServerError) -> MobileAuthentication {
        guard let ott = req.mpinResponse.authOTT.flatMap({ Hex.canonical($0) }), !ott.isEmpty else {
            throw ServerError.badRequest("BAD REQUEST. authOTT argument missing")
        }
        let hash = Secrets.hash(ott)
        let max = config.maxInvalidLoginAttempts
        // Drawn before knowing whether the record is an access code's: one random draw and a
        // hash, so that the verdict and the issuance share one transaction.
        let secret = try Secrets.randomBase64URL(32)
        let code = NewAuthorizationCode(code: secret, codeHash: Secrets.hash(secret),
                                        expires: Date().addingTimeInterval(TimeInterval(config.mfa.authzCodeTTLSeconds)))
        guard let v = try await run({ try await self.storage.evaluate(
            authOTTHash: hash, flow: .mobile(authOTT: ott, code: code), maxAttempts: max, now: Date()) }) else {
            metrics.recordRefusedLogin()
            throw ServerError.accessNumberInvalid
        }
        metrics.recordVerdict(status: v.status, blockedNow: v.blockedNow)
        if let authorization = v.authorization {
            logger.info("authentication", metadata: ["status": "200", "flow": "access-code"])
            return .authorized(AuthorizationCodeResponse(code: authorization.code,
                                                               redirectURL: authorization.redirectURL))
        }
        logger.info("authentication", metadata: ["status": "\(v.status)", "flow": "access-number"])
        if v.status == 412 { throw ServerError.accessCodeInvalid }
        guard v.status == 200 else { throw v.status == 410 ? blocked(v, authOTT: ott) : ServerError.wrongPIN }
        let deadline = Date().addingTimeInterval(config.mobileWaitSeconds)
        while Date() < deadline {
            if try await run({ try await self.storage.browserReady(authOTTHash: hash) }) { break }
            do { try await Task.sleep(nanoseconds: 100_000_000) } catch { break }  // shutting down
        }
        guard let logout = try await run({ try await self.storage.finishMobile(authOTTHash: hash) }) else {
            throw ServerError.expired("Authentication timed out")
        }
        return .loggedIn(MobileAuthenticateResponse(logoutData: LogoutData(userId: logout.userID, sessionToken: logout.token),
                                                    logoutURL: config.logoutURL))
    }

    // MARK: Access numbers (§5.1, §5.3)

    /// Draws and stores a new access number with the requester's (already checked) description.
    /// `verdictNonce`: the requester's nonce, carried in the webOTT (§4.5.1).
    func issueAccessNumber(description: String = "", verdictNonce: [UInt8]? = nil) async throws(ServerError) -> AccessNumberResponse {
        let now = Date()
        guard let random = try? SystemRandom.bytes(Verdict.ottRandomSize) else { throw ServerError.internal("Random source failed") }
        let webOTT = Verdict.oneTimeToken(random: random, nonce: verdictNonce)
        let ttl = config.accessNumberExpireSeconds
        let expires = now.addingTimeInterval(TimeInterval(ttl + config.accessNumberExtendValiditySeconds))
        for _ in 0..<100 {
            guard let body = Int(try digits(6)), let number = AccessNumber.issue(body: body) else { continue }
            let stored = try await run { try await self.storage.createAccessNumber(
                wid: number, webOTTHash: Secrets.hash(webOTT), expires: expires, now: now, description: description) }
            if stored {
                let start = WireTime.milliseconds(now)
                return AccessNumberResponse(localTimeStart: start, ttlSeconds: ttl, localTimeEnd: start + Int64(ttl) * 1000,
                                            webOTT: webOTT, accessNumber: number)
            }
        }
        throw ServerError.unavailable("No access number available")
    }

    /// Browser polling: 200 with the authOTT once the mobile succeeded, else 401.
    func pollAccessNumber(_ req: AccessNumberPollRequest) async throws(ServerError) -> AccessNumberPollResponse {
        guard let web = Hex.canonical(req.webOTT), !web.isEmpty else { throw ServerError.badRequest("Invalid webOTT") }
        guard let ott = try await run({ try await self.storage.pollAccessNumber(webOTTHash: Secrets.hash(web), now: Date()) })
        else { throw ServerError.unauthorized("Not authenticated yet") }
        return AccessNumberPollResponse(authOTT: ott)
    }

    // MARK: Logout (§5.6)

    func logout(_ req: LogoutData) async throws(ServerError) {
        let ok = try await run { try await self.storage.endSession(tokenHash: Secrets.hash(req.sessionToken),
                                                                   userID: req.userId, now: Date()) }
        guard ok else { throw ServerError.badRequest("Logout failed") }
    }
}

/// The answer of the mobile final step: an access-number login's logout data, or an
/// access-code login's authorization code (MFA.md §6).
enum MobileAuthentication: Sendable {
    case loggedIn(MobileAuthenticateResponse)
    case authorized(AuthorizationCodeResponse)
}

