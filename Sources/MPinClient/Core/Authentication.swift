public import MPinCrypto
internal import MPinJSON
internal import MPinWire

/// Authentication (PROTOCOL.md §4–§6).
extension MPinSDK {
    /// Whether a blocked user's token stays (a host's registration, MPinIdentity.hostScope):
    /// the administrator's `user unblock` then brings the same token back, and a forgotten
    /// PIN is the only reason to register again. Asking a backend about a blocked identity is no
    /// oracle: it answers 410 to every proof, right PIN or wrong, and counts none.
    func keepsTokenWhenBlocked(_ user: MPinUser) -> Bool {
        user.mpinId.map(MPinIdentity.isHostScoped) ?? false
    }

    /// The states a login may start from: registered, and blocked for a token that was kept.
    func authenticable(_ user: MPinUser) -> [MPinUserState] {
        keepsTokenWhenBlocked(user) ? [.registered, .blocked] : [.registered]
    }

    /// Whether a login of this blocked user may still ask its backend (which alone can say it
    /// was unblocked): a host's registration whose token is still stored.
    package func mayAskAfterBlock(_ user: MPinUser) -> Bool {
        guard user.state == .blocked, keepsTokenWhenBlocked(user) else { return false }
        return (try? storedToken(user)) != nil
    }

    /// `StartAuthentication(user, accessCode)`: fetches both time-permit shares for the day the
    /// RPS names (its share, then the second D-TA's: S3 cache, then `certivoxURL`). REVOKED on 410.
    public func startAuthentication(_ user: MPinUser, accessCode: String = "") -> MPinStatus {
        if let refusal = check(user, in: authenticable(user)) { return refusal }
        guard let settings else { return MPinStatus(.flowError, "no backend is set") }
        let codeStatusURL = settings.wire.codeStatusURL ?? ""
        if !accessCode.isEmpty, !codeStatusURL.isEmpty {
            _ = request(.post, codeStatusURL, body: CodeStatusRequest.userChosen(accessCode: accessCode, userId: user.id))
        }
        user.wipePermits()
        guard settings.usePermits else { return .ok }

        // A registration that pinned the backend's verdict key believes "revoked" only when it
        // is signed over a nonce drawn here (Verdict.revokedContext): the host records a revoked
        // identity, and keeps nothing from an answer whoever holds the port could have sent.
        var permitURL = settings.wire.timePermitsURL + "/" + user.mpinIdHex
        var nonce: [UInt8] = []
        if !user.verdictKeyHex.isEmpty {
            do { nonce = try SystemRandom.bytes(Verdict.nonceSize) } catch {
                return MPinStatus(.cryptoError, "could not draw a nonce: \(error)")
            }
            permitURL += "?" + Verdict.nonceParameter + "=" + Hex.encode(nonce)
        }
        let rps: TimePermitResponse
        let (permitReply, refusalBody) = requestKeepingRefusalBody(.get, permitURL, context: .timePermit)
        switch permitReply {
        case .failed(let s, let http):
            if http == 410, !nonce.isEmpty,
               !Verdict.verify(refusalBody?["verdictSignature"]?.stringValue, publicKeyHex: user.verdictKeyHex, nonce: nonce,
                               mpinID: user.mpinId ?? [], userID: user.id, status: 410, context: Verdict.revokedContext) {
                return MPinStatus(.cryptoError, Self.unsignedVerdict)
            }
            return s
        case .ok(let v, _):
            guard let r = WireCoding.lenient(TimePermitResponse.self, from: v) else {
                return MPinStatus(.responseParseError, "the time-permit response is not usable")
            }
            rps = r
        }
        let date = Int64(rps.date)
        guard date > 0, date <= Int64(Int32.max), let share1 = Hex.decode(rps.timePermit), !share1.isEmpty else {
            return MPinStatus(.responseParseError, "the time-permit response has no usable date and permit")
        }
        let storageId = rps.storageId
        let appID = settings.wire.appID
        // §4.2: the device cache, then the S3 cache, then the second D-TA. The cache is keyed by
        // the locally computed storage id; an RPS naming another one gets no cache at all.
        let cacheName = Self.permitCacheName(user).flatMap { name in
            name == "permit-" + storageId.lowercased() ? name : nil
        }
        var share2 = cacheName.flatMap { devicePermitShare(name: $0, date: date) }
        let fromDevice = share2 != nil
        if share2 == nil {
            share2 = cachedPermitShare(settings.wire.timePermitsStorageURL, appID: appID, date: date, storageId: storageId)
        }
        if share2 == nil {
            let url = settings.wire.certivoxURL + "timePermit?hash_mpin_id=" + FormEncoding.escape(storageId)
                + "&app_id=" + FormEncoding.escape(appID) + "&mobile=1&signature=" + FormEncoding.escape(rps.signature)
            switch request(.get, url, context: .timePermit) {
            case .failed(let s, _): return s
            case .ok(let v, _): share2 = WireCoding.lenient(DTATimePermitResponse.self, from: v).flatMap { Hex.decode($0.timePermit) }
            }
        }
        guard let share2, !share2.isEmpty else { return MPinStatus(.responseParseError, "the second time-permit share is missing") }
        // A fetched share is cached only once a login with it has succeeded (see
        // settlePermitCache), so a bad share is never kept for the rest of the day.
        user.permitFromDevice = fromDevice
        if !fromDevice, let cacheName {
            user.permitToCache = (cacheName, date, share2)
        }
        user.timePermitShare1 = share1
        user.timePermitShare2 = share2
        user.timePermitDate = Int32(date)
        return .ok
    }

    /// The name of the device's cached second share for a user: its own value, so that caching
    /// never rewrites the user list (which another process may be changing at the same time),
    /// named after the user's storage id (hex SHA-256 of the mpinId, computed here).
    static func permitCacheName(_ user: MPinUser) -> String? {
        guard let mpinId = user.mpinId else { return nil }
        return "permit-" + Hex.encode(MPin.hashID(mpinId))
    }

    /// The second share cached on the device for `date` (§4.2 step 1), if there is one.
    private func devicePermitShare(name: String, date: Int64) -> [UInt8]? {
        guard let doc = try? readDocument(context_.nonSecureStorage, name),
              doc["date"]?.int64Value == date,
              let share = Hex.decode(doc["timePermit"]?.stringValue ?? ""), !share.isEmpty else { return nil }
        return share
    }

    /// After a login: a fetched share that worked is cached for its day; a cached share that
    /// did not (wrong PIN, or not a point) is forgotten, so the next login fetches it afresh
    /// instead of failing all day. A failure only costs a request next time.
    func settlePermitCache(_ user: MPinUser, status: MPinStatus) {
        defer { user.permitToCache = nil; user.permitFromDevice = false }
        switch status.code {
        case .ok:
            guard let (name, date, share) = user.permitToCache else { return }
            let doc = JSONValue.object([("date", .number(String(date))), ("timePermit", .string(Hex.encode(share)))])
            try? context_.nonSecureStorage.write(name, doc.serialized)
        case .incorrectPIN, .cryptoError:
            if user.permitFromDevice { removeDevicePermitShare(user) }
        default:
            break
        }
    }

    /// Forgets the user's cached second share (DeleteUser, blocked).
    func removeDevicePermitShare(_ user: MPinUser) {
        guard let name = Self.permitCacheName(user) else { return }
        try? context_.nonSecureStorage.delete(name)
    }

    /// The S3 cache of the second share: the body is raw hex text (§4.2). Any failure falls through.
    private func cachedPermitShare(_ storageURL: String, appID: String, date: Int64, storageId: String) -> [UInt8]? {
        guard !storageURL.isEmpty, !appID.isEmpty, !storageId.isEmpty else { return nil }
        let url = storageURL + "/" + appID + "/" + String(date) + "/" + storageId
        guard checkTrusted(url) == nil,
              let response = try? context_.transport.send(HTTPRequest(method: .get, url: url, headers: customHeaders)),
              response.status == 200 else { return nil }
        let text = response.text.filter { !$0.isWhitespace }
        return Hex.decode(text)
    }

    /// `CheckAccessNumber`: the checksum rule of §5.2 when the backend uses it.
    public func checkAccessNumber(_ accessNumber: String) -> MPinStatus {
        guard !accessNumber.isEmpty else { return MPinStatus(.incorrectAccessNumber, "no access number") }
        guard let settings else { return MPinStatus(.flowError, "no backend is set") }
        let useCheckSum = (settings.wire.accessNumberUseCheckSum ?? true) && settings.wire.cSum != 0
        guard useCheckSum, settings.wire.accessNumberDigits == 7 else { return .ok }
        return AccessNumber.sdkAccepts(accessNumber) ? .ok : MPinStatus(.incorrectAccessNumber, "the access number's check digit is wrong")
    }

    /// `FinishAuthentication(user, pin)`: pass 1, pass 2 and the final step at `authenticateURL`.
    /// Returns the relying party's response text on success.
    public func finishAuthentication(_ user: MPinUser, pin: borrowing SecretBytes) -> (status: MPinStatus, authResultData: String) {
        let r = authenticate(user, pin0: pin, pin1: SecretBytes(), otp: false, wid: "", finalStep: .relyingParty)
        return (r.status, r.status.isOK ? r.result.serializedString : "")
    }

    /// `FinishAuthenticationOTP(user, pin)`: as FinishAuthentication, asking the server for an OTP.
    public func finishAuthenticationOTP(_ user: MPinUser, pin: borrowing SecretBytes) -> (status: MPinStatus, otp: MPinOTP) {
        finishAuthenticationOTP(user, pin0: pin, pin1: SecretBytes())
    }

    /// FinishAuthenticationOTP with an optional second factor (MFA.md §10).
    func finishAuthenticationOTP(_ user: MPinUser, pin0: borrowing SecretBytes, pin1: borrowing SecretBytes)
        -> (status: MPinStatus, otp: MPinOTP) {
        let r = authenticate(user, pin0: pin0, pin1: pin1, otp: true, wid: "", finalStep: .relyingParty)
        var otp = MPinOTP()
        guard r.status.isOK else { return (r.status, otp) }
        guard let code = WireCoding.lenient(MPinResponse.self, from: r.pass2)?.OTP, !code.isEmpty else {
            otp.status = MPinStatus(.responseParseError, "OTP not issued")
            return (r.status, otp)
        }
        otp.otp = code
        let timing = WireCoding.lenient(RPAAuthenticateResponse.self, from: r.result)
        let expire = timing?.expireTime ?? 0, now = timing?.nowTime ?? 0, ttl = timing?.ttlSeconds ?? 0
        guard expire > 0, now > 0, ttl > 0 else {
            otp.status = MPinStatus(.responseParseError, "OTP data is malformed")
            return (r.status, otp)
        }
        otp.expireTime = expire / 1000
        otp.nowTime = now / 1000
        otp.ttlSeconds = ttl
        otp.status = .ok
        return (r.status, otp)
    }

    /// `FinishAuthenticationAN(user, pin, accessNumber)`: logs a browser session in; the final
    /// step goes to the RPS `mobileAuthenticateURL`, whose logout data is kept for `logout`.
    public func finishAuthenticationAN(_ user: MPinUser, pin: borrowing SecretBytes, accessNumber: String) -> MPinStatus {
        let r = authenticate(user, pin0: pin, pin1: SecretBytes(), otp: false, wid: accessNumber,
                             finalStep: accessNumber.isEmpty ? .relyingParty : .mobile)
        // logoutData is opaque to the client (§5.6): it is kept and posted back as it came.
        if r.status.isOK, user.logoutURL.isEmpty,
           let url = WireCoding.lenient(MobileAuthenticateResponse.self, from: r.result)?.logoutURL, !url.isEmpty {
            user.logoutURL = url
            if let data = r.result["logoutData"], case .object = data { user.logoutData = data.serializedString }
        }
        return r.status
    }

    /// `FinishAuthenticationMFA(user, pin)`: returns the authorization code (`code`).
    public func finishAuthenticationMFA(_ user: MPinUser, pin: borrowing SecretBytes) -> (status: MPinStatus, authzCode: String) {
        let r = authenticate(user, pin0: pin, pin1: SecretBytes(), otp: false, wid: "", finalStep: .relyingParty)
        return (r.status, WireCoding.lenient(AuthorizationCodeResponse.self, from: r.result)?.code ?? "")
    }

    /// `CanLogout(user)`: whether the last authentication left a logout URL to call.
    public func canLogout(_ user: MPinUser) -> Bool { !user.logoutURL.isEmpty }

    /// `Logout(user)`: posts the kept logout data; true only on HTTP 200.
    public func logout(_ user: MPinUser) -> Bool {
        guard !user.logoutURL.isEmpty else { return false }
        let data = (try? JSONParser().parse(user.logoutData)) ?? .object([])
        guard case .ok = request(.post, backend + user.logoutURL, body: data) else { return false }
        user.logoutURL = ""
        user.logoutData = ""
        return true
    }

    /// Where the final step posts the pass-2 answer.
    enum FinalStep {
        /// `authenticateURL` (the relying party): plain logins and OTPs.
        case relyingParty
        /// `mobileAuthenticateURL` (the RPS): access numbers and MFA access codes.
        case mobile
        /// An MFA-platform endpoint that takes the final step: registration codes (docs/MFA.md §8)
        /// and DVS registration tokens (§14.1).
        case platformEndpoint(url: String)
    }

    /// The two passes and the final step. `pass2` is the server's pass-2 answer, `result` the
    /// final step's JSON. `wid` is the access number or access code ("" for none); `pin1`
    /// the optional second factor (empty: the Milagro proof).
    func authenticate(_ user: MPinUser, pin0: borrowing SecretBytes, pin1: borrowing SecretBytes, otp: Bool,
                      wid: String, finalStep: FinalStep) -> (status: MPinStatus, pass2: JSONValue, result: JSONValue) {
        let r = passes(user, pin0: pin0, pin1: pin1, otp: otp, wid: wid, finalStep: finalStep)
        if r.status.code != .flowError, r.status.code != .pinInputCanceled { settlePermitCache(user, status: r.status) }
        return r
    }

    private func passes(_ user: MPinUser, pin0 pin: borrowing SecretBytes, pin1: borrowing SecretBytes, otp: Bool,
                        wid: String, finalStep: FinalStep) -> (status: MPinStatus, pass2: JSONValue, result: JSONValue) {
        let empty = JSONValue.object([])
        if let refusal = check(user, in: authenticable(user)) { return (refusal, empty, empty) }
        guard let settings, let mpinId = user.mpinId else { return (MPinStatus(.flowError, "no backend is set"), empty, empty) }
        guard !pin.isEmpty else { return (MPinStatus(.pinInputCanceled), empty, empty) }
        let usePermits = settings.usePermits
        guard !usePermits || user.timePermitDate > 0 else {
            return (MPinStatus(.flowError, "no time permit: call startAuthentication first"), empty, empty)
        }

        // Pass 1. The secrets (token, x, SEC) are SecretBytes and wipe themselves.
        let token: SecretBytes
        do {
            token = try storedToken(user)
        } catch let status {
            return (status, empty, empty)
        }
        let x: SecretBytes
        do { x = try MPin.secretScalar() } catch {
            return (MPinStatus(.cryptoError, "could not draw a random scalar: \(error)"), empty, empty)
        }
        let pass1: MPin.Pass1
        do {
            let permit = usePermits ? try MPin.recombineG1(user.timePermitShare1, user.timePermitShare2) : nil
            let date = usePermits ? user.timePermitDate : 0
            pass1 = try MPin.client1(date: date, mpinID: mpinId, x: x, pin0: pin, pin1: pin1, token: token, timePermit: permit)
        } catch {
            return (MPinStatus(.cryptoError, "could not compute pass 1: \(error)"), empty, empty)
        }
        let (u, ut) = (pass1.u, pass1.ut)
        let authServer = settings.wire.mpinAuthServerURL
        let body1 = Pass1Request(mpinId: user.mpinIdHex, ut: ut.map(Hex.encode) ?? "", u: Hex.encode(u))
        let y: [UInt8]
        var pass1Id: String? = nil
        switch request(.post, authServer + "/pass1", body: body1) {
        case .failed(let s, _): return (s, empty, empty)
        case .ok(let v, _):
            guard let answer = WireCoding.lenient(Pass1Response.self, from: v),
                  let decoded = Hex.decode(answer.y), decoded.count == 32 else {
                return (MPinStatus(.responseParseError, "the pass-1 response has no usable y"), empty, empty)
            }
            y = decoded
            // mpin-server names its pending pass 1 so that several logins of one identity can
            // run at once; it is echoed as it came (a Milagro server sends none).
            pass1Id = answer.pass1Id.flatMap { Hex.decode($0, length: 16) != nil ? $0 : nil }
        }

        // Pass 2: the server always answers 200; the verdict comes with the final step.
        let v: [UInt8]
        do { v = try MPin.client2(x: x, y: y, sec: pass1.sec) } catch {
            return (MPinStatus(.cryptoError, "could not compute pass 2: \(error)"), empty, empty)
        }
        // A registration that pinned the backend's verdict key gets the relying party's verdict
        // signed over a nonce drawn here and bound to this proof by the server (§4.5.1): an
        // OK, or a "blocked" that deletes the token, is believed only with that signature,
        // whoever answers on the backend's address, and no verdict of another login fits.
        // Every final step of a pinned registration binds a nonce: the relying party's OK is
        // checked, and so is any step's "blocked" before the token is deleted.
        let signed = !user.verdictKeyHex.isEmpty
        var signsOK = false
        if case .relyingParty = finalStep { signsOK = signed }
        var nonce: [UInt8] = []
        // Offline logins to report ride on the relying party's final step, bound to the nonce:
        // the nonce is then the hash of a fresh random salt and the report (§4.5.2), as
        // unpredictable as a random one.
        var report: OfflineLoginReport? = nil
        offlineLoginsRecorded = nil
        if signed {
            do { nonce = try SystemRandom.bytes(Verdict.nonceSize) } catch {
                return (MPinStatus(.cryptoError, "could not draw a nonce: \(error)"), empty, empty)
            }
            if signsOK, var pending = offlineReport {
                pending.salt = Hex.encode(nonce)
                if pending.isWellFormed {
                    report = pending
                    nonce = pending.nonce(salt: nonce)
                }
            }
        }
        let body2 = Pass2Request(mpinId: user.mpinIdHex, v: Hex.encode(v), wid: wid.isEmpty ? "0" : wid, otp: otp, pass1Id: pass1Id,
                                 verdictNonce: signed ? Hex.encode(nonce) : nil)
        let pass2: JSONValue
        switch request(.post, authServer + "/pass2", body: body2) {
        case .failed(let s, _): return (s, empty, empty)
        case .ok(let value, _): pass2 = value
        }

        // The pass-2 answer goes to the final step as it came (§4.5).
        let finalURL: String
        switch finalStep {
        case .relyingParty: finalURL = settings.wire.authenticateURL
        case .mobile: finalURL = settings.wire.mobileAuthenticateURL
        case .platformEndpoint(let url): finalURL = url
        }
        // A count the server signed apart from the verdict (attempts left, offline logins
        // recorded): believed only in `range` and with the pinned key's signature over this
        // login's nonce and the count's context.
        func signedCount(_ body: JSONValue?, _ member: String, signedBy signatureMember: String, status: Int,
                         in range: ClosedRange<Int>, context: (Int) -> String) -> Int? {
            guard let n = body?[member]?.int64Value, n >= Int64(range.lowerBound), n <= Int64(range.upperBound),
                  Verdict.verify(body?[signatureMember]?.stringValue, publicKeyHex: user.verdictKeyHex, nonce: nonce,
                                 mpinID: mpinId, userID: user.id, status: status, context: context(Int(n))) else { return nil }
            return Int(n)
        }
        func verdictIsSigned(_ body: JSONValue?, status: Int) -> Bool {
            Verdict.verify(body?["verdictSignature"]?.stringValue, publicKeyHex: user.verdictKeyHex, nonce: nonce,
                           mpinID: mpinId, userID: user.id, status: status, context: Verdict.tokenContext)
        }
        let envelope = AuthenticateEnvelope(mpinResponse: pass2, offlineLogins: report)
        user.attemptsLeft = nil
        let (reply, refusalBody) = requestKeepingRefusalBody(.post, finalURL, body: envelope, context: .authenticate)
        switch reply {
        case .ok(let result, _):
            guard !signsOK || verdictIsSigned(result, status: 200) else {
                return (MPinStatus(.cryptoError, Self.unsignedVerdict), pass2, empty)
            }
            // The backend's acknowledgment of the report, believed only with its signature over
            // this login's nonce: the host forgets the logins it reported only then.
            if report != nil {
                offlineLoginsRecorded = signedCount(result, "offlineLoginsRecorded", signedBy: "offlineLoginsSignature", status: 200,
                                                    in: 0...OfflineLoginReport.maxLogins, context: Verdict.offlineLoginsRecordedContext)
            }
            if user.state == .blocked {
                // The administrator unblocked the identity: the host's token is back in use.
                user.state = .registered
                let saved = saveUsers()
                if !saved.isOK { return (saved, pass2, empty) }
            }
            return (.ok, pass2, result)
        case .failed(let status, let http):
            if http == 410, signed, !verdictIsSigned(refusalBody, status: 410) {
                // Not the pinned server's word: the token stays.
                return (MPinStatus(.cryptoError, Self.unsignedVerdict), pass2, empty)
            }
            if http == 401, signsOK, !verdictIsSigned(refusalBody, status: 401) {
                // A "wrong PIN" is believed as an "OK" is: a host keeps its client settings
                // only after an answer it has authenticated (docs/SECURITY.md §3).
                return (MPinStatus(.cryptoError, Self.unsignedVerdict), pass2, empty)
            }
            if http == 401, signed {
                user.attemptsLeft = signedCount(refusalBody, "attemptsLeft", signedBy: "attemptsLeftSignature", status: 401,
                                                in: 0...1000, context: Verdict.attemptsLeftContext)
            }
            if http == 401, user.state == .blocked {
                // A signed wrong PIN for a kept token: unblocked, and counting again.
                user.state = .registered
                let saved = saveUsers()
                if !saved.isOK { return (saved, pass2, empty) }
            }
            if http == 410 {
                user.state = .blocked
                user.wipePermits()
                removeDevicePermitShare(user)
                // A host's token is kept (keepsTokenWhenBlocked); any other is deleted, as the SDK does.
                let keep = keepsTokenWhenBlocked(user)
                if !keep { user.signingMpinIdHex = ""; user.signingPublicKeyHex = "" }
                let saved = keep ? saveUsers() : saveUsers(removingSecretOf: user.mpinIdHex)
                if !saved.isOK { return (saved, pass2, empty) }
            }
            return (status, pass2, empty)
        }
    }

    /// Why a verdict was not believed; the same text for every case, so that it tells an
    /// impostor nothing.
    static let unsignedVerdict = "the backend's verdict is not signed with the key pinned at registration"
}
