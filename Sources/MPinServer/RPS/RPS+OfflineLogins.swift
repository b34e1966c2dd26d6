import Foundation
import Logging
import MPinWire

extension RPS {
    /// Keeps the offline logins a host reported with a successful login (`verdict`, status
    /// 200) of a host token, when the report is well formed and bound to the nonce in the
    /// login's `authOTT` (docs/PROTOCOL.md §4.5.2); the count of logins new to the server,
    /// signed over that nonce, or nil when the report is refused. The login's answer never
    /// depends on it.
    func recordOfflineLogins(_ report: OfflineLoginReport, verdict: AuthVerdict, authOTT: String,
                             source: String) async -> SignedCount? {
        // Only a host's own login reports: a direct final step (not the browser's step of an
        // access-number login, whose proof a device made) of an identity issued for one host.
        // A device's login binds a nonce its user never checks on success, so a report riding
        // on it could be forged unseen.
        guard !verdict.isReport, verdict.wid.isEmpty, let mpinBytes = Hex.decode(verdict.mpinID),
              MPinIdentity.isHostScoped(mpinBytes) else {
            logger.notice("offline logins refused", metadata: ["reason": "not a host token's login"])
            return nil
        }
        let now = Date().timeIntervalSince1970
        guard report.isWellFormed else {
            logger.notice("offline logins refused", metadata: ["reason": "malformed report"])
            return nil
        }
        // A host's clock may be off by a little; a login dated far ahead would outlive the
        // newest ones in the per-user bound.
        guard report.logins.allSatisfy({ Double($0.time) <= now + OfflineLoginLog.maxClockAhead }) else {
            logger.notice("offline logins refused", metadata: ["reason": "a login dated in the future"])
            return nil
        }
        let nonce = Verdict.nonce(inOneTimeToken: authOTT)
        guard report.isBound(to: nonce), let nonce else {
            // Rewritten on the way, or sent by a host that bound nothing: nothing is kept, and
            // the host, finding no signed acknowledgment, keeps its logins for its next login.
            logger.notice("offline logins refused", metadata: ["reason": "not bound to the login's nonce"])
            return nil
        }
        let entries = report.logins.map {
            OfflineLoginEntry(mpinID: verdict.mpinID, id: $0.id, host: report.host, source: source, service: $0.service,
                              outcome: $0.outcome, time: $0.time, reported: now)
        }
        let added: [OfflineLoginEntry]
        do {
            added = try await storage.recordOfflineLogins(entries, userID: verdict.userID)
        } catch {
            metrics.recordDatabaseError()
            logger.error("offline logins not recorded", metadata: ["reason": "database error"])
            return nil
        }
        let wrong = added.filter { $0.outcome != "OK" }.count
        metrics.recordOfflineLogins(ok: added.count - wrong, wrongPIN: wrong)
        // The identity's fingerprint, not the user: the admin finds them with `user show`.
        logger.notice("offline logins reported", metadata: [
            "host": "\(report.host)", "identity": "\(entries[0].fingerprint.prefix(16))",
            "new": "\(added.count)", "ok": "\(added.count - wrong)", "incorrectPIN": "\(wrong)",
        ])
        guard let signature = verdictKey.sign(nonce: nonce, mpinIDHex: verdict.mpinID, userID: verdict.userID, status: 200,
                                              context: Verdict.offlineLoginsRecordedContext(added.count)) else { return nil }
        return SignedCount(count: added.count, signature: signature)
    }
}
