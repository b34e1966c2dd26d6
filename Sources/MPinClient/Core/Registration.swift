import MPinCrypto
import MPinJSON
import MPinWire

/// Registration (docs/PROTOCOL.md §3.3–§3.8).
extension MPinSDK {
    /// `StartRegistration(user, activateCode, userData)`: `PUT registerURL`. The user joins the
    /// list as STARTED_REGISTRATION, or ACTIVATED when the server says `"active": true`. A
    /// `regCode` (the MFA flavour's registration code, docs/MFA.md §8; pam_mpin's self-enrolment
    /// sends the one `mpin-server user invite` printed) makes the registration active at once.
    public func startRegistration(_ user: MPinUser, activateCode: String = "", userData: String = "",
                                  regCode: String = "") -> MPinStatus {
        guard initialized, settings != nil else { return MPinStatus(.flowError, "no backend is set") }
        guard user.state == .invalid, !users.contains(where: { $0 === user }) else {
            return MPinStatus(.flowError, "the user has already started registration")
        }
        guard !isUserExisting(user.id) else { return MPinStatus(.flowError, "\(user.id) already exists on this backend") }
        user.backendKey = currentBackendKey
        return register(user, urlSuffix: "", activateCode: activateCode, userData: userData, isNew: true, regCode: regCode)
    }

    /// The MFA flavour's StartRegistration (MPinMFA): the user is scoped to the backend's
    /// customer (its `appID`, docs/MFA.md §1) and `appId`; the access code and the registration
    /// code go in the body (docs/MFA.md §8). A dead access code is INCORRECT_ACCESS_NUMBER, a
    /// refused registration code IDENTITY_NOT_AUTHORIZED.
    func startCustomerRegistration(_ user: MPinUser, accessCode: String, regCode: String, appId: String,
                                   pushMessageIdentifier: String) -> MPinStatus {
        guard initialized, let settings else { return MPinStatus(.flowError, "no backend is set") }
        guard user.state == .invalid, !users.contains(where: { $0 === user }) else {
            return MPinStatus(.flowError, "the user has already started registration")
        }
        let customerId = settings.wire.appID
        guard !users.contains(where: { $0.id == user.id && $0.customerId == customerId && $0.appId == appId }) else {
            return MPinStatus(.flowError, "\(user.id) already exists for this customer")
        }
        user.backendKey = currentBackendKey
        user.customerId = customerId
        user.appId = appId
        user.pushMessageIdentifier = pushMessageIdentifier
        let status = register(user, urlSuffix: "", activateCode: "", userData: "", isNew: true,
                              accessCode: accessCode, regCode: regCode)
        if !status.isOK, !users.contains(where: { $0 === user }) {
            // Not registered: the object may start again (for another customer, or once fixed).
            user.backendKey = ""; user.customerId = ""; user.appId = ""; user.pushMessageIdentifier = ""
        }
        return status
    }

    /// `RestartRegistration(user, userData)`: only from STARTED_REGISTRATION; re-sends the
    /// registration with the mpinId and regOTT, adopting new ones if the server issues them.
    public func restartRegistration(_ user: MPinUser, userData: String = "") -> MPinStatus {
        if let refusal = check(user, in: [.startedRegistration]) { return refusal }
        return register(user, urlSuffix: "/" + user.mpinIdHex, activateCode: "", userData: userData, isNew: false)
    }

    private func register(_ user: MPinUser, urlSuffix: String, activateCode: String, userData: String,
                          isNew: Bool, accessCode: String = "", regCode: String = "") -> MPinStatus {
        guard let settings else { return MPinStatus(.flowError, "no backend is set") }
        let body = RegisterRequest(userId: user.id, mobile: 1, deviceName: user.deviceName.isEmpty ? nil : user.deviceName,
                                   userData: userData.isEmpty ? nil : userData,
                                   activateCode: activateCode.isEmpty ? nil : activateCode, regOTT: isNew ? nil : user.regOTT,
                                   wid: accessCode.isEmpty ? nil : accessCode, regCode: regCode.isEmpty ? nil : regCode,
                                   scope: registersHostTokens ? MPinIdentity.hostScope : nil,
                                   replaces: regCode.isEmpty || replacesMpinIdHex.isEmpty ? nil : replacesMpinIdHex)
        let answer: RegisterResponse?
        let context: RequestContext = accessCode.isEmpty ? .register : .registerWithAccessCode
        switch request(.put, settings.wire.registerURL + urlSuffix, body: body, context: context) {
        case .failed(let s, _): return s
        case .ok(let v, _): answer = WireCoding.lenient(RegisterResponse.self, from: v)
        }
        let mpinIdHex = Hex.canonical(answer?.mpinId ?? "") ?? ""
        let regOTT = answer?.regOTT ?? ""
        guard !mpinIdHex.isEmpty, !regOTT.isEmpty, let mpinId = Hex.decode(mpinIdHex), MPinIdentity.parse(mpinId) != nil else {
            return MPinStatus(.responseParseError, "the registration response has no usable mpinId and regOTT")
        }
        // A host's token must approve nothing but its host's logins. A backend that signs its
        // verdicts (mpin-server) marks the mpinId it issues, and the mark is hashed into the
        // client secret; an mpinId without it means the request's scope was taken off on the
        // way, or the server cannot keep the promise (docs/SECURITY.md §2).
        let announcesKey = Verdict.isPublicKey(settings.wire.verdictKey ?? "")
        if registersHostTokens, announcesKey, !MPinIdentity.isHostScoped(mpinId) {
            return MPinStatus(.identityNotAuthorized, "the backend issued a registration that is not marked for host logins only")
        }
        let previous = user.mpinIdHex
        if isNew { users.append(user) }
        if mpinIdHex != user.mpinIdHex || regOTT != user.regOTT {
            user.mpinIdHex = mpinIdHex
            user.regOTT = regOTT
            user.state = .startedRegistration
            // The key the verdicts of this registration's logins must be signed with: taken
            // from the backend the registration is made with, now, and never from a later
            // login's settings (which whoever answers then could send).
            let key = settings.wire.verdictKey ?? ""
            user.verdictKeyHex = Verdict.isPublicKey(key) ? key.lowercased() : ""
        }
        if answer?.active == true { user.state = .activated }
        if !previous.isEmpty, previous != mpinIdHex { _ = saveUsers(removingSecretOf: previous) }
        return saveUsers(secretFor: mpinIdHex, secret: .object([("regOTT", .string(regOTT))]))
    }

    /// `ConfirmRegistration(user, pushMessageIdentifier)`: fetches both client-secret shares
    /// (RPS signature endpoint, then the second D-TA with the signed params) into memory.
    /// IDENTITY_NOT_VERIFIED until the identity has been activated. The state does not change.
    public func confirmRegistration(_ user: MPinUser, pushMessageIdentifier: String = "") -> MPinStatus {
        if let refusal = check(user, in: [.startedRegistration, .activated]) { return refusal }
        guard let settings else { return MPinStatus(.flowError, "no backend is set") }
        var url = settings.wire.signatureURL + "/" + user.mpinIdHex + "?regOTT=" + FormEncoding.escape(user.regOTT)
        if !pushMessageIdentifier.isEmpty { url += "&pmiToken=" + FormEncoding.escape(pushMessageIdentifier) }
        let first: SignatureResponse?
        switch request(.get, url, context: .clientSecret1) {
        case .failed(let s, _): return s
        case .ok(let v, _): first = WireCoding.lenient(SignatureResponse.self, from: v)
        }
        guard let first, var share1 = Hex.decode(first.clientSecretShare), !share1.isEmpty else {
            return MPinStatus(.responseParseError, "the response has no client-secret share")
        }
        // certivoxURL ends with "/"; the params go through verbatim (§3.6).
        let second: ClientSecretResponse?
        switch request(.get, settings.wire.certivoxURL + "clientSecret?" + first.params, context: .clientSecret2) {
        case .failed(let s, _): return s
        case .ok(let v, _): second = WireCoding.lenient(ClientSecretResponse.self, from: v)
        }
        guard var share2 = Hex.decode(second?.clientSecret ?? ""), !share2.isEmpty else {
            share1.wipe()
            return MPinStatus(.responseParseError, "the response has no client secret")
        }
        user.clientSecretShare1 = SecretBytes(taking: &share1)
        user.clientSecretShare2 = SecretBytes(taking: &share2)
        return .ok
    }

    /// `FinishRegistration(user, pin)`: adds the shares, folds the PIN out (the SDK's string
    /// hash, §4.6) and stores the token; the user becomes REGISTERED. No copy of the PIN is kept.
    public func finishRegistration(_ user: MPinUser, pin: borrowing SecretBytes) -> MPinStatus {
        finishRegistration(user, pin0: pin, pin1: SecretBytes())
    }

    /// FinishRegistration with an optional second factor (docs/MFA.md §10): the token folds out
    /// f0(pin0) + f1(pin1); an empty `pin1` gives the Milagro token.
    func finishRegistration(_ user: MPinUser, pin0 pin: borrowing SecretBytes, pin1: borrowing SecretBytes) -> MPinStatus {
        if let refusal = check(user, in: [.startedRegistration, .activated]) { return refusal }
        guard !user.clientSecretShare1.isEmpty, !user.clientSecretShare2.isEmpty, let mpinId = user.mpinId else {
            return MPinStatus(.flowError, "the identity is not verified: call confirmRegistration first")
        }
        guard !pin.isEmpty else { return MPinStatus(.pinInputCanceled) }
        let tokenHex: String
        do {
            let clientSecret = try MPin.recombineClientSecret(user.clientSecretShare1, user.clientSecretShare2)
            let token = try MPin.extractPIN(mpinID: mpinId, pin0: pin, pin1: pin1, clientSecret: clientSecret)
            tokenHex = token.withUnsafeBytes { Hex.encode($0) }
        } catch {
            return MPinStatus(.cryptoError, "the client-secret shares are invalid: \(error)")
        }
        let previous = user.state
        user.state = .registered
        let status = saveUsers(secretFor: user.mpinIdHex, secret: .object([("token", .string(tokenHex))]))
        guard status.isOK else { user.state = previous; return status }
        user.regOTT = ""
        user.wipeShares()
        return .ok
    }
}
