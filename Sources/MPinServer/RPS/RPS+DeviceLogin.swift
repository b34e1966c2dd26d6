import Foundation
import Logging
import MPinWire

/// Access numbers for logins approved from a device (PROTOCOL.md §5.1, §5.7, **[here]**): the
/// requester's description, its lookup by the approving device, the per-address rate limit.
extension RPS {
    /// `POST /{p}/getAccessNumber`, with the requester's optional description, counted against
    /// the rate limit of the requester (`client` and its description) and of `client`.
    func getAccessNumber(_ req: AccessNumberRequest?, client: String) async throws(ServerError) -> AccessNumberResponse {
        let description = req?.description ?? ""
        guard AccessNumberDescription.isValid(description) else {
            throw ServerError.badRequest("Invalid description: at most \(AccessNumberDescription.maxScalars) characters, no control characters")
        }
        guard issueLimit.admit(client + "\n" + description), issueHostLimit.admit(client) else {
            logger.notice("access number refused", metadata: ["reason": "rate limit"])
            throw ServerError.tooManyRequests
        }
        return try await issueAccessNumber(description: description, verdictNonce: Verdict.nonce(fromHex: req?.verdictNonce))
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
