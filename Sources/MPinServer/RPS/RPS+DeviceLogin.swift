import Foundation
import Logging
import MPinCrypto
import MPinWire

/// Access numbers for logins approved from a device (PROTOCOL.md §5.1, §5.7, **[here]**): the
/// requester's description, its lookup by the approving device, the per-address rate limit.
extension RPS {
    /// `POST /{p}/getAccessNumber`, with the requester's optional description. A certified host
    /// (§5.8) counts against its own limits, per host key and user and per host key (not per
    /// description, which carries the remote host a client names);
    /// any other request against the anonymous ones: per `client` and description, per
    /// `client`, and all of them together.
    func getAccessNumber(_ req: AccessNumberRequest?, client: String, now: Date = Date()) async throws(ServerError) -> AccessNumberResponse {
        let description = req?.description ?? ""
        guard AccessNumberDescription.isValid(description) else {
            throw ServerError.badRequest("Invalid description: at most \(AccessNumberDescription.maxScalars) characters, no control characters")
        }
        if let req, let host = certifiedHost(req, now: now) {
            guard issueKeyLimit.admit(host + "\n" + (req.hostUser ?? ""), now: now), issueKeyHostLimit.admit(host, now: now) else {
                logger.notice("access number refused", metadata: ["reason": "rate limit of the host key"])
                throw ServerError.tooManyRequests
            }
        } else {
            guard issueLimit.admit(client + "\n" + description, now: now), issueHostLimit.admit(client, now: now),
                  issueAnonymousLimit.admit("", now: now) else {
                logger.notice("access number refused", metadata: ["reason": "rate limit"])
                throw ServerError.tooManyRequests
            }
        }
        return try await issueAccessNumber(description: description, verdictNonce: Verdict.nonce(fromHex: req?.verdictNonce))
    }

    /// The host key (hex) of a request that names one with this server's certificate, signed
    /// by it within `HostCredential.freshnessSeconds` and not seen before; nil otherwise (the
    /// request is then anonymous). The certificate is checked first: a made-up key costs one
    /// signature check, and a request without a certificate none.
    func certifiedHost(_ req: AccessNumberRequest, now: Date) -> String? {
        guard let certificate = req.hostCertificate, let key = HostCredential.publicKey(fromHex: req.hostKey) else { return nil }
        let seconds = Int(now.timeIntervalSince1970)
        guard HostCredential.certificateExpiry(certificate, hostKey: key, serverKey: verdictKey.publicKey, now: seconds) != nil,
              HostCredential.verifySignature(req, hostKey: key, nowMillis: Int(now.timeIntervalSince1970 * 1000)),
              let signature = req.hostSignature.flatMap({ Hex.decode($0) }), hostSignatures.firstUse(signature, now: now) else {
            logger.debug("host credential not accepted; the request is anonymous")
            return nil
        }
        return Hex.encode(key)
    }

    /// A certificate for the host key a requester sent with the final step of a login a device
    /// approved (§5.8): only to the holder of that number's webOTT, and only for a 200.
    func hostCertificate(_ v: AuthVerdict, webOTT: String?, hostKey: String?) async throws(ServerError) -> String? {
        guard v.status == 200, !v.wid.isEmpty, let key = HostCredential.publicKey(fromHex: hostKey),
              let web = webOTT.flatMap({ Hex.canonical($0) }) else { return nil }
        let wid = v.wid
        guard let requester = try await run({ try await self.storage.accessNumberRequester(wid: wid) }),
              Secrets.equal(requester.webOTTHash, Secrets.hash(web)) else { return nil }
        return verdictKey.certify(hostKey: key, expires: Int(Date().timeIntervalSince1970) + HostCredential.certificateLifetimeSeconds)
    }

    /// `GET /{p}/accessnumber/{accessNumber}`: what a live, unused access number was issued for,
    /// read by the approving device before it asks for the PIN; 404 otherwise. Counted per
    /// address, per number and over all callers (`LookupRateLimit`), so that numbers cannot be
    /// swept for descriptions from many addresses either.
    func accessNumberDetails(_ accessNumber: String, client: String) async throws(ServerError) -> AccessNumberDetailsResponse {
        guard AccessNumber.isValid(accessNumber) else { throw ServerError.badRequest("Invalid access number") }
        guard accessNumberLimit.admit(client, number: accessNumber) else {
            logger.notice("access number look-up refused", metadata: ["reason": "rate limit"])
            throw ServerError.tooManyRequests
        }
        let now = Date()
        guard let found = try await run({ try await self.storage.accessNumberDescription(wid: accessNumber, now: now) }) else {
            throw ServerError.accessNumberNotFound
        }
        let left = max(0, Int(found.expires.timeIntervalSince(now).rounded(.down)))
        return AccessNumberDetailsResponse(accessNumber: accessNumber, description: found.description, ttlSeconds: left)
    }
}
