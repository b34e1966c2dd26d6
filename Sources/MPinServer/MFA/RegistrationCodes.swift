import Foundation
import Logging
import MPinWire

/// Registration codes (docs/MFA.md §8): a device that proves the user's PIN gets a short code with
/// which another device registers the same identity without identity verification.
extension RPS {
    /// Digits of a registration code: 10^12 values, against a handful of live codes per user
    /// and single use, so guessing one within its lifetime is hopeless.
    static let regCodeDigits = 12

    /// `POST /{p}/regCode` with the final step's envelope: the pass-2 verdict, with the wrong-PIN
    /// counter, exactly as the direct final step; on 200 a new registration code for the user.
    func issueRegCode(_ req: AuthenticateRequest) async throws(ServerError) -> RegCodeResponse {
        let userID = try await authenticatedUser(req, flow: "registration code")
        let now = Date()
        let ttl = config.mfa.regCodeTTLSeconds
        let expires = now.addingTimeInterval(TimeInterval(ttl))
        for _ in 0..<10 {
            guard let code = Secrets.randomDigits(Self.regCodeDigits) else { throw ServerError.internal("Random source failed") }
            let stored = try await run { try await self.storage.issueRegCode(
                codeHash: Secrets.hash(code), userID: userID, expires: expires, now: now) }
            if stored {
                return RegCodeResponse(regCode: code, expireTime: WireTime.milliseconds(expires), ttlSeconds: ttl,
                                       nowTime: WireTime.milliseconds(now))
            }
        }
        throw ServerError.unavailable("No registration code available")
    }

    /// The final step of an authentication at a platform endpoint (`regCode`, `dvsRegToken`):
    /// evaluates the stored pass-2 result once, with the wrong-PIN counter, and returns the
    /// authenticated user; 401 for a wrong PIN, 410 once blocked, 408 when expired or used.
    func authenticatedUser(_ req: AuthenticateRequest, flow: String) async throws(ServerError) -> String {
        guard let ott = req.mpinResponse.authOTT.flatMap({ Hex.canonical($0) }), !ott.isEmpty else {
            throw ServerError.badRequest("BAD REQUEST. authOTT argument missing")
        }
        let max = config.maxInvalidLoginAttempts
        guard let verdict = try await run({ try await self.storage.evaluate(
            authOTTHash: Secrets.hash(ott), flow: .direct, maxAttempts: max, now: Date()) }) else {
            throw ServerError.expired("Expired authentication request")
        }
        logger.info("authentication", metadata: ["status": "\(verdict.status)", "flow": "\(flow)"])
        guard verdict.status == 200 else { throw verdict.status == 410 ? blocked(verdict, authOTT: ott) : ServerError.wrongPIN }
        return verdict.userID
    }

    /// The MFA parts of a registration request (docs/MFA.md §8): a `wid` must name a live session
    /// (404 otherwise; it is not used up), a `regCode` must be 12 digits (403 otherwise). Returns
    /// the hash of the registration code to use up with the registration, if there is one.
    func checkMFARegistration(_ req: RegisterRequest, now: Date) async throws(ServerError) -> String? {
        if let wid = req.wid, !wid.isEmpty {
            guard AccessCode.isAccessCode(wid) else { throw ServerError.sessionNotFound }
            let live = try await run { try await self.storage.codeStatus(accessCodeHash: Secrets.hash(wid), verb: .wid, now: now) }
            guard live != nil else { throw ServerError.sessionNotFound }
        }
        guard let code = req.regCode, !code.isEmpty else { return nil }
        guard code.utf8.count == Self.regCodeDigits, code.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            throw ServerError.regCodeRefused
        }
        return Secrets.hash(code)
    }
}
