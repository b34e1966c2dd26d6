import Foundation
import Logging
import MPinWire

extension RPS {
    /// Keeps the offline logins a host reported with a successful login (`verdict`, status
    /// 200), when the report is well formed and bound to the nonce in the login's `authOTT`
    /// (docs/PROTOCOL.md §4.5.2); how many were kept (0: refused, or all kept already). The
    /// login's answer never depends on it.
    func recordOfflineLogins(_ report: OfflineLoginReport, verdict: AuthVerdict, authOTT: String,
                             source: String) async -> Int {
        guard report.isWellFormed else {
            logger.notice("offline logins refused", metadata: ["reason": "malformed report"])
            return 0
        }
        guard report.isBound(to: Verdict.nonce(inOneTimeToken: authOTT)) else {
            // Rewritten on the way (or sent by a host that bound nothing): the host will see the
            // verdict signed over another nonce and refuse the login too.
            logger.notice("offline logins refused", metadata: ["reason": "not bound to the login's nonce"])
            return 0
        }
        let now = Date().timeIntervalSince1970
        let entries = OfflineLoginEntry.numbered(report.logins.map {
            OfflineLoginEntry(mpinID: verdict.mpinID, host: report.host, source: source, service: $0.service,
                              outcome: $0.outcome, time: $0.time, reported: now)
        })
        let added: [OfflineLoginEntry]
        do {
            added = try await storage.recordOfflineLogins(entries, userID: verdict.userID)
        } catch {
            metrics.recordDatabaseError()
            logger.error("offline logins not recorded", metadata: ["reason": "database error"])
            return 0
        }
        let wrong = added.filter { $0.outcome != "OK" }.count
        metrics.recordOfflineLogins(ok: added.count - wrong, wrongPIN: wrong)
        // The identity's fingerprint, not the user: the admin finds them with `user show`.
        logger.notice("offline logins reported", metadata: [
            "host": "\(report.host)", "identity": "\(entries[0].fingerprint.prefix(16))",
            "new": "\(added.count)", "ok": "\(added.count - wrong)", "incorrectPIN": "\(wrong)",
        ])
        return added.count
    }
}
