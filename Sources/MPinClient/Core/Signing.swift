public import MPinCrypto
internal import MPinJSON
public import MPinWire

/// A DVS signature as `Sign` returns it (the SDK API reference's `BridgeSignature`, with the time): the
/// document hash, the signing mpinId, U, V and the public key Pa, as bytes; `timestamp` is the
/// epoch time that was signed. Everything here is public: it goes to the relying party.
public struct MPinSignature: Sendable, Equatable {
    /// The signed message: the document's SHA-256.
    public var hash: [UInt8] = []
    /// The signing identity's mpinId.
    public var mpinId: [UInt8] = []
    /// The signature's U (a G1 point).
    public var u: [UInt8] = []
    /// The signature's V (a G1 point).
    public var v: [UInt8] = []
    /// The signer's public key Pa (a G2 point).
    public var publicKey: [UInt8] = []
    /// When it was signed, in Unix seconds.
    public var timestamp: Int64 = 0

    /// An empty signature, for `sign` to fill in.
    public init() {}

    /// The wire form relying parties post to `dvsVerify` (docs/MFA.md §14.3).
    public var message: DVSSignatureMessage {
        DVSSignatureMessage(hash: Hex.encode(hash), mpinId: Hex.encode(mpinId), u: Hex.encode(u), v: Hex.encode(v),
                            publicKey: Hex.encode(publicKey), timestamp: timestamp)
    }
}

/// Designated verifier signatures (the SDK API reference's DVS methods, docs/MFA.md §14): a REGISTERED
/// user enrols a signing key with its own signing PIN, then signs document hashes that only
/// the platform can verify.
extension MPinMFA {
    /// `StartRegistrationDVS(user, token)`: `token` is a DVS registration token: the access
    /// token the relying party received for this user at `/oidc/token`, or one from
    /// `startRegistrationDVS(_:pin0:pin1:)`. Draws the key pair (z, Pa), sends Pa with the
    /// token to `dvsRegURL` and fetches both client-secret shares of the signing identity into
    /// memory. FLOW_ERROR unless the user is REGISTERED; IDENTITY_NOT_AUTHORIZED when the
    /// platform refuses the token (unknown, expired or used).
    public func startRegistrationDVS(_ user: MPinUser, token: String) -> MPinStatus {
        if let refusal = core.check(user, in: [.registered]) { return refusal }
        guard !token.isEmpty else { return MPinStatus(.flowError, "no DVS registration token") }
        user.wipePendingSigningKey()
        var secretKey = SecretBytes()
        let publicKey: DVSPublicKey
        do { publicKey = try DVS.generateKeyPair(secretKey: &secretKey) } catch {
            return MPinStatus(.cryptoError, "could not draw a signing key: \(error)")
        }
        let body = DVSRegisterRequest(publicKey: Hex.encode(publicKey.bytes), deviceName: user.deviceName,
                                      dvsRegisterToken: token)
        let first: DVSRegisterResponse
        switch core.request(.post, dvsURL("dvsregister", settingsKey: "dvsRegURL"), body: body, context: .register) {
        case .failed(let s, _): return s
        case .ok(let v, _):
            guard let answer = WireCoding.lenient(DVSRegisterResponse.self, from: v), answer.curve == "BN254CX",
                  let mpinId = Hex.decode(answer.mpinId), MPinIdentity.parse(mpinId) != nil, !answer.cs2url.isEmpty else {
                return MPinStatus(.responseParseError, "the DVS registration answer is not usable")
            }
            first = answer
        }
        guard var share1 = Hex.decode(first.dvsClientSecretShare), !share1.isEmpty else {
            return MPinStatus(.responseParseError, "the DVS registration answer has no client-secret share")
        }
        let cs2url = first.cs2url.utf8.first == UInt8(ascii: "/") ? core.backend + first.cs2url : first.cs2url
        var share2: [UInt8] = []
        switch core.request(.get, cs2url, context: .clientSecret2) {
        case .failed(let s, _): share1.wipe(); return s
        case .ok(let v, _):
            // MIRACL's D-TA names it `dvsClientSecret`, a Milagro D-TA `clientSecret`.
            let hex = WireCoding.lenient(DVSClientSecretResponse.self, from: v)?.dvsClientSecret ?? ""
            share2 = Hex.decode(hex.isEmpty ? WireCoding.lenient(ClientSecretResponse.self, from: v)?.clientSecret ?? "" : hex) ?? []
        }
        guard !share2.isEmpty else { share1.wipe(); return MPinStatus(.responseParseError, "the second DVS share is missing") }
        user.pendingSigningPublicKeyHex = Hex.encode(publicKey.bytes)
        user.pendingSigningKey = secretKey
        user.pendingSigningShare1 = SecretBytes(taking: &share1)
        user.pendingSigningShare2 = SecretBytes(taking: &share2)
        user.pendingSigningMpinIdHex = Hex.encode(Hex.decode(first.mpinId) ?? [])
        return .ok
    }

    /// StartRegistrationDVS for an app that has no relying party to hand it a token (MIRACL's
    /// later `startRegistrationDvs(user, pin0, pin1)`): authenticates with the login factors,
    /// the final step at `dvsRegToken` issuing the token (a wrong PIN counts as for a login),
    /// then enrols as `startRegistrationDVS(_:token:)`.
    public func startRegistrationDVS(_ user: MPinUser, pin0: borrowing SecretBytes, pin1: borrowing SecretBytes) -> MPinStatus {
        if let refusal = core.check(user, in: [.registered]) { return refusal }
        let started = core.startAuthentication(user)
        guard started.isOK else { return started }
        let r = core.authenticate(user, pin0: pin0, pin1: pin1, otp: false, wid: "",
                                  finalStep: .platformEndpoint(url: dvsURL("dvsRegToken", settingsKey: "dvsRegTokenURL")))
        guard r.status.isOK else { return r.status }
        guard let token = WireCoding.lenient(DVSRegisterTokenResponse.self, from: r.result)?.dvsRegisterToken, !token.isEmpty else {
            return MPinStatus(.responseParseError, "the platform issued no DVS registration token")
        }
        return startRegistrationDVS(user, token: token)
    }

    /// `FinishRegistrationDVS(user, pinDVS, nfc)`: recombines the shares, folds z in and the
    /// signing factors out (`nfc` is the optional second factor, empty for none) and stores the
    /// signing token apart from the authentication token. The user can sign afterwards.
    /// FLOW_ERROR without a StartRegistrationDVS before it.
    public func finishRegistrationDVS(_ user: MPinUser, pinDVS: borrowing SecretBytes, nfc: borrowing SecretBytes) -> MPinStatus {
        if let refusal = core.check(user, in: [.registered]) { return refusal }
        guard !user.pendingSigningShare1.isEmpty, !user.pendingSigningShare2.isEmpty,
              let mpinId = Hex.decode(user.pendingSigningMpinIdHex), let pa = Hex.decode(user.pendingSigningPublicKeyHex),
              let publicKey = try? DVSPublicKey(bytes: pa) else {
            return MPinStatus(.flowError, "no DVS registration was started: call startRegistrationDVS first")
        }
        guard !pinDVS.isEmpty else { return MPinStatus(.pinInputCanceled) }
        let tokenHex: String
        do {
            let clientSecret = try MPin.recombineClientSecret(user.pendingSigningShare1, user.pendingSigningShare2)
            let token = try DVS.extractToken(signingIdentity: DVS.signingIdentity(mpinID: mpinId, publicKey: publicKey),
                                             pin0: pinDVS, pin1: nfc, clientSecret: clientSecret,
                                             secretKey: user.pendingSigningKey)
            tokenHex = token.withUnsafeBytes { Hex.encode($0) }
        } catch {
            return MPinStatus(.cryptoError, "the DVS client-secret shares are invalid: \(error)")
        }
        // The token goes first: a user list naming a signing key whose token is missing loads
        // as a user that cannot sign (Persistence).
        let saved = core.saveUsers(secretFor: MPinSDK.signingTokenKey(user.mpinIdHex),
                                   secret: .object([("token", .string(tokenHex))]))
        guard saved.isOK else { return saved }
        user.signingMpinIdHex = user.pendingSigningMpinIdHex
        user.signingPublicKeyHex = user.pendingSigningPublicKeyHex
        let listed = core.saveUsers()
        user.wipePendingSigningKey()
        return listed
    }

    /// `Sign(user, documentHash, pin0, pin1, epochTime, authZToken)`: signs the hash with the
    /// signing factors, then has the platform check the signature (`dvsVerify`), so that a
    /// wrong signing PIN is INCORRECT_PIN here and is counted there: the third in a row blocks
    /// the signing key, which the user then no longer has (`canSign` false; its token is
    /// dropped; logins are not affected). FLOW_ERROR for a user that cannot sign. `authZToken`
    /// is sent as the check's `Authorization` header when given (MIRACL's platform requires it;
    /// mpin-server relies on the per-key counter instead, docs/MFA.md §14.3).
    public func sign(_ user: MPinUser, documentHash: [UInt8], pin0: borrowing SecretBytes, pin1: borrowing SecretBytes,
                     epochTime: Int64, authZToken: String = "") -> (status: MPinStatus, signature: MPinSignature) {
        var result = MPinSignature()
        if let refusal = core.check(user, in: [.registered]) { return (refusal, result) }
        guard user.canSign, let mpinId = Hex.decode(user.signingMpinIdHex), let pa = Hex.decode(user.signingPublicKeyHex),
              let publicKey = try? DVSPublicKey(bytes: pa) else {
            return (MPinStatus(.flowError, "the user cannot sign: register for DVS first"), result)
        }
        guard !documentHash.isEmpty else { return (MPinStatus(.flowError, "no document hash"), result) }
        guard (0...Int64(Int32.max)).contains(epochTime) else { return (MPinStatus(.flowError, "the epoch time is out of range"), result) }
        guard !pin0.isEmpty else { return (MPinStatus(.pinInputCanceled), result) }
        let signature: DVSSignature
        do {
            let token = try core.storedSigningToken(user)
            signature = try DVS.sign(signingIdentity: DVS.signingIdentity(mpinID: mpinId, publicKey: publicKey),
                                     pin0: pin0, pin1: pin1, token: token, message: documentHash, timeValue: Int32(epochTime))
        } catch let status as MPinStatus {
            return (status, result)
        } catch {
            return (MPinStatus(.cryptoError, "could not sign: \(error)"), result)
        }
        result.hash = documentHash
        result.mpinId = mpinId
        result.u = signature.u
        result.v = signature.v
        result.publicKey = publicKey.bytes
        result.timestamp = epochTime
        let headers = authZToken.isEmpty ? [:] : ["Authorization": authZToken]
        switch core.request(.post, dvsURL("dvsVerify", settingsKey: "dvsVerifyURL"), body: result.message,
                            context: .signatureCheck, extraHeaders: headers) {
        case .failed(let status, let http):
            if http == 410 { dropSigningKey(user) }
            return (status, MPinSignature())
        case .ok(let v, _):
            guard let answer = WireCoding.lenient(DVSVerifyResponse.self, from: v) else {
                return (MPinStatus(.responseParseError, "the signature check answer is not usable"), MPinSignature())
            }
            guard answer.valid else { return (MPinStatus(.incorrectPIN, "wrong signing PIN"), MPinSignature()) }
            return (.ok, result)
        }
    }

    /// `VerifyDocument(strDoc, hash)`: whether `hash` is the SHA-256 of the document's UTF-8
    /// bytes, compared in constant time. No server call.
    public func verifyDocument(_ document: String, hash: [UInt8]) -> Bool {
        let digest = SHA256.hash(Array(document.utf8))
        guard hash.count == digest.count else { return false }
        var difference: UInt8 = 0
        for i in digest.indices { difference |= digest[i] ^ hash[i] }
        return difference == 0
    }

    /// What a relying party does with a signature it received: asks the platform at `server`
    /// (`dvsVerify`, found through its client settings) whether it is valid, and whose it is.
    /// Needs neither `initialize` nor a set backend. An invalid signature is counted against
    /// the signing key there (docs/MFA.md §14.3); a blocked key answers INCORRECT_PIN, an
    /// unknown one FLOW_ERROR.
    public func verifySignature(_ signature: DVSSignatureMessage, server: String, rpsPrefix: String = "rps")
        -> (status: MPinStatus, valid: Bool, userId: String) {
        let (status, view) = core.fetchSettings(server, rpsPrefix: rpsPrefix)
        guard status.isOK, let view else { return (status, false, "") }
        switch core.request(.post, view.url("dvsVerifyURL", besideRegisterURL: "dvsVerify"), body: signature,
                           context: .signatureVerification) {
        case .failed(let s, _): return (s, false, "")
        case .ok(let v, _):
            guard let answer = WireCoding.lenient(DVSVerifyResponse.self, from: v) else {
                return (MPinStatus(.responseParseError, "the verification answer is not usable"), false, "")
            }
            return (.ok, answer.valid, answer.valid ? answer.userId : "")
        }
    }

    /// After the platform blocked the signing key: forget it and its token.
    private func dropSigningKey(_ user: MPinUser) {
        user.signingMpinIdHex = ""
        user.signingPublicKeyHex = ""
        _ = core.saveUsers(secretFor: MPinSDK.signingTokenKey(user.mpinIdHex), secret: nil)
    }

    /// A DVS endpoint: the client settings' URL under `settingsKey` when the server names one,
    /// else `name` beside `registerURL` (`/{p}/user` → `/{p}/name`, docs/MFA.md §14).
    func dvsURL(_ name: String, settingsKey: String) -> String {
        guard let settings = core.settings else { return "" }
        return settings.url(settingsKey, besideRegisterURL: name)
    }
}
