import Foundation
import Logging
import MPinCrypto
import MPinWire

/// Designated verifier signatures on the platform side (docs/MFA.md §14): tokens that let an
/// authenticated user enrol a signing key, the enrolment itself (the first D-TA's share of the
/// client secret for the signing identity `mpinId ‖ Pa`), and the verification relying parties
/// and signing clients ask for, with a wrong-PIN counter per signing key.
extension RPS {
    /// How long a DVS registration token from `dvsRegToken` lives.
    static let dvsTokenTTLSeconds = 300

    /// `POST /{p}/dvsRegToken`: the final step of an authentication (as `regCode`); a PIN
    /// proof that fails counts toward blocking the identity.
    func issueDVSToken(_ req: AuthenticateRequest) async throws(ServerError) -> DVSRegisterTokenResponse {
        let userID = try await authenticatedUser(req, flow: "dvs registration token")
        let now = Date()
        let ttl = Self.dvsTokenTTLSeconds
        let expires = now.addingTimeInterval(TimeInterval(ttl))
        let token = try Secrets.randomHex(32)
        guard try await run({ try await self.storage.issueDVSToken(tokenHash: Secrets.hash(token), userID: userID,
                                                                   expires: expires) }) else {
            throw ServerError.internal("Token collision")
        }
        return DVSRegisterTokenResponse(dvsRegisterToken: token, expireTime: WireTime.milliseconds(expires), ttlSeconds: ttl,
                                        nowTime: WireTime.milliseconds(now))
    }

    /// `POST /{p}/dvsregister`: uses up the token, issues a signing mpinId for its user,
    /// enrols Pa under it and answers the first share of s·map(SHA-256(mpinId ‖ Pa)) with the
    /// signed URL of the second.
    func registerSigningKey(_ req: DVSRegisterRequest) async throws(ServerError) -> DVSRegisterResponse {
        guard req.publicKey.utf8.count == 2 * DVSPublicKey.byteCount, let paBytes = Hex.decode(req.publicKey),
              let publicKey = try? DVSPublicKey(bytes: paBytes) else {
            throw ServerError.badRequest("BAD REQUEST. INVALID PUBLIC KEY")
        }
        guard req.deviceName.utf8.count <= 256 else { throw ServerError.badRequest("BAD REQUEST. INVALID DEVICE NAME") }
        guard (1...128).contains(req.dvsRegisterToken.utf8.count) else { throw ServerError.dvsTokenRefused }
        let now = Date()
        guard let userID = try await run({ try await self.storage.useDVSToken(
            tokenHash: Secrets.hash(req.dvsRegisterToken), now: now) }) else {
            logger.info("dvs registration refused", metadata: ["reason": "token"])
            throw ServerError.dvsTokenRefused
        }
        guard let salt = try? SystemRandom.bytes(16) else { throw ServerError.internal("Random source failed") }
        let mpinID = MPinIdentity.build(userID: userID, mobile: 1, issued: now, salt: salt)
        let mpinIDHex = Hex.encode(mpinID)
        guard try await run({ try await self.storage.saveSigningKey(mpinID: mpinIDHex, userID: userID,
                                                                    publicKey: Hex.encode(publicKey.bytes), now: now) }) else {
            throw ServerError.internal("Signing identity collision")
        }
        let signingIdentity = DVS.signingIdentity(mpinID: mpinID, publicKey: publicKey)
        let params = clientSecretParams(hashMpinID: Hex.encode(MPin.hashID(signingIdentity)), mobile: 1, now: now)
        let share = try await dta1.clientSecret(params)
        logger.info("signing key enrolled")
        metrics.recordRegistrationCompleted()
        return DVSRegisterResponse(dvsClientSecretShare: share.clientSecret, cs2url: certivoxURL + "clientSecret?" + params.query,
                                   mpinId: mpinIDHex)
    }

    /// `POST /{p}/dvsVerify`: checks a signature against the enrolled key of its mpinId. An
    /// invalid signature counts toward blocking the key, as a wrong PIN counts toward blocking a
    /// login identity, so that the endpoint is no PIN-guessing oracle for someone holding a
    /// stolen signing token. A blocked key is 410; an unknown one 404.
    ///
    /// docs/SECURITY.md §5: a signature whose U the platform has seen valid before (every signature
    /// is checked here when it is made) is answered from that record, never counted, and answered
    /// even once the key is blocked: valid when it is that signature, invalid when anything else
    /// (hash, timestamp, V) changed. Such a request is no PIN guess: a guess needs the pairing
    /// check, and a guesser who reuses a seen U (he need not know its x: V − (y' − y)·SEC' is the
    /// signature of another message under a guessed PIN) gets "invalid" whatever the PIN. So a
    /// third party holding a signed file, replaying or altering it, spends nothing, and blocks no
    /// earlier signature; a replay does not reset the counter either (else a guesser could
    /// interleave one between guesses).
    func verifySignature(_ req: DVSSignatureMessage) async throws(ServerError) -> DVSVerifyResponse {
        guard req.mpinId.utf8.count <= 2 * Self.maxMpinIDBytes, let mpinID = Hex.decode(req.mpinId), !mpinID.isEmpty else {
            throw ServerError.badRequest("BAD REQUEST. INVALID MPIN ID")
        }
        guard req.hash.utf8.count <= 128, let message = Hex.decode(req.hash), !message.isEmpty else {
            throw ServerError.badRequest("BAD REQUEST. INVALID HASH")
        }
        guard (0...Int64(Int32.max)).contains(req.timestamp),
              let u = Hex.decode(req.u), let v = Hex.decode(req.v),
              let signature = try? DVSSignature(u: u, v: v, timeValue: Int32(req.timestamp)) else {
            throw ServerError.badRequest("BAD REQUEST. INVALID SIGNATURE")
        }
        let mpinIDHex = Hex.encode(mpinID)
        guard let key = try await run({ try await self.storage.signingKey(mpinID: mpinIDHex) }) else {
            throw ServerError.signingKeyNotFound
        }
        // The enrolled key decides; a signature naming another Pa is not this key's (and is not
        // counted: it cannot be a PIN guess against it).
        guard Hex.canonical(req.publicKey) == key.publicKey else { return DVSVerifyResponse(valid: false, userId: "") }
        let seen = Self.seenSignature(mpinIDHex: mpinIDHex, signature: signature, message: message)
        if let digest = try await run({ try await self.storage.seenSignature(key: seen.key) }) {
            let same = Secrets.equal(digest, seen.digest)
            logger.info("signature verified", metadata: ["verdict": "\(same ? "seen" : "altered")"])
            return same ? DVSVerifyResponse(valid: true, userId: key.userID) : DVSVerifyResponse(valid: false, userId: "")
        }
        if key.blocked { throw ServerError.signingKeyBlocked }
        guard let paBytes = Hex.decode(key.publicKey), let publicKey = try? DVSPublicKey(bytes: paBytes) else {
            throw ServerError.internal("Stored signing key unusable")
        }
        let valid = DVS.verify(signature, message: message, mpinID: mpinID, publicKey: publicKey, serverSecret: serverSecret)
        let verdict = try await run({ try await self.storage.recordSignatureVerdict(
            mpinID: mpinIDHex, valid: valid, seen: seen, maxAttempts: self.config.maxInvalidLoginAttempts, now: Date()) })
        logger.info("signature verified", metadata: ["verdict": "\(verdict)"])
        switch verdict {
        case .valid: return DVSVerifyResponse(valid: true, userId: key.userID)
        case .invalid: return DVSVerifyResponse(valid: false, userId: "")
        case .blocked: throw ServerError.signingKeyBlocked
        case .unknownKey: throw ServerError.signingKeyNotFound
        }
    }

    /// How a signature is remembered once seen valid: keyed by its signing mpinId and U, with a
    /// digest of everything else the check reads (timestamp, message, V).
    static func seenSignature(mpinIDHex: String, signature: DVSSignature, message: [UInt8]) -> SeenSignature {
        SeenSignature(key: Secrets.hash(mpinIDHex + ":" + Hex.encode(signature.u)),
                      digest: Secrets.hash("\(signature.timeValue):" + Hex.encode(message) + ":" + Hex.encode(signature.v)))
    }
}
