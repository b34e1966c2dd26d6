import Foundation
import MPinWire

/// A stored pass-2 result as the final step reads it (`auth`).
struct AuthRecord: Sendable, Equatable {
    var mpinID: String
    var success: Bool
    /// The access number, `ac:` + an access code's hash (MFA.md §6), or "" (a direct login).
    var wid: String
    var otp: String?
    /// The verdict of the mobile's step of an access-number login, once given.
    var priorStatus: Int?
    var expires: Double
}

/// One write of the final step, which each backend renders in its SQL. Those marked
/// conditional may find their row taken (`Applied.refused`).
enum FinalStepWrite: Sendable, Equatable {
    /// Deletes the pass-2 record (single use).
    case deleteAuth
    /// Conditional: marks the browser's step of an access-number login done, once.
    case markBrowserReady
    /// Opens the RPA's session of a successful login.
    case openSession(NewSession, userID: String)
    /// Keeps the logout data the waiting mobile reads (`finishMobile`).
    case recordLogout(userID: String, token: String)
    /// Writes the identity's wrong-PIN counter.
    case count(WrongPINCounter.Update)
    /// Conditional: hands the authOTT to the access number's requester, first approval only (§5.7).
    case claimAccessNumber(authOTT: String, wid: String)
    /// Keeps the mobile's verdict for the browser's step.
    case recordStatus(Int)
    /// Conditional: issues the authorization code of an access-code login (MFA.md §6).
    case authorize(accessCodeHash: String, userID: String, code: NewAuthorizationCode)
}

/// The final step on a pass-2 record, decided once for both backends: they read the record
/// and the identity (locked, on PostgreSQL), ask `decide`, and apply its writes in order in
/// the same transaction (`execute`).
struct FinalStepPlan: Sendable, Equatable {
    /// What a backend's write came to.
    enum Applied: Sendable, Equatable {
        case done
        /// A conditional write found its row taken: the plan ends with `ifRefused`.
        case refused
        /// The authorization code was issued.
        case granted(IssuedAuthorization)
    }

    var writes: [FinalStepWrite]
    /// The verdict when every write is done (nil: no usable record).
    var verdict: AuthVerdict?
    /// The writes and verdict instead, when a conditional write is refused.
    var ifRefused: (writes: [FinalStepWrite], verdict: AuthVerdict?) = ([], nil)

    static func == (a: FinalStepPlan, b: FinalStepPlan) -> Bool {
        a.writes == b.writes && a.verdict == b.verdict && a.ifRefused.writes == b.ifRefused.writes
            && a.ifRefused.verdict == b.ifRefused.verdict
    }

    /// Nothing to write, no verdict: no usable record for this flow.
    static let unusable = FinalStepPlan(writes: [], verdict: nil)

    /// The final step of `flow` on `record`: the wrong-PIN counter (`FinalStepVerdict`), the
    /// single use of the record, the session or logout data of a 200, an access number's
    /// first approval, an access code's authorization code.
    static func decide(record: AuthRecord, identity: IdentityCounter?, flow: AuthFlow, maxAttempts: Int, now: Date,
                       session: NewSession?, logoutData: LogoutData?) -> FinalStepPlan {
        if record.expires <= now.timeIntervalSince1970 { return FinalStepPlan(writes: [.deleteAuth], verdict: nil) }
        let userID = identity?.userID ?? ""
        switch flow {
        case .direct where !record.wid.isEmpty:
            // The browser's step of an access-number login: reports the mobile's verdict (counted
            // there), once only: a replayed browser step finds the record used.
            guard let prior = record.priorStatus else { return .unusable }
            var writes: [FinalStepWrite] = [.markBrowserReady]
            if prior == 200, let session {
                writes += [.openSession(session, userID: userID), .recordLogout(userID: userID, token: session.token)]
            } else if prior == 200, let logoutData {
                writes.append(.recordLogout(userID: logoutData.userId, token: logoutData.sessionToken))
            }
            return FinalStepPlan(writes: writes, verdict: AuthVerdict(status: prior, userID: userID, mpinID: record.mpinID,
                                                                      otp: record.otp, isReport: true, wid: record.wid))
        case .mobile where record.wid.isEmpty, .mobile where record.priorStatus != nil:
            return .unusable
        default:
            break
        }
        let (status, blockedNow, update) = FinalStepVerdict.decide(identity: identity, success: record.success,
                                                                   maxAttempts: maxAttempts, now: now)
        var writes: [FinalStepWrite] = update.map { [.count($0)] } ?? []
        var verdict = AuthVerdict(status: status, userID: userID, mpinID: record.mpinID, otp: status == 200 ? record.otp : nil,
                                  blockedNow: blockedNow)
        // The count a host shows its user comes from the counter this verdict writes, in the
        // same transaction: what the next wrong PIN will find.
        if status == 401, let update { verdict.attemptsLeft = max(0, maxAttempts - update.attempts) }
        switch flow {
        case .direct:
            writes.append(.deleteAuth)
            if status == 200, let session { writes.append(.openSession(session, userID: userID)) }
            return FinalStepPlan(writes: writes, verdict: verdict)
        case .mobile(_, let code) where record.wid.hasPrefix(AccessCode.storedPrefix):
            // Single use; a 200 issues the code, or 412 when the access code's session is gone.
            writes.append(.deleteAuth)
            guard status == 200 else { return FinalStepPlan(writes: writes, verdict: verdict) }
            writes.append(.authorize(accessCodeHash: String(record.wid.dropFirst(AccessCode.storedPrefix.count)),
                                     userID: userID, code: code))
            return FinalStepPlan(writes: writes, verdict: AuthVerdict(status: 200, userID: userID, mpinID: record.mpinID, otp: nil),
                                 ifRefused: ([], AuthVerdict(status: 412, userID: userID, mpinID: record.mpinID, otp: nil)))
        case .mobile(let authOTT, _):
            // Only the first approval of an access number hands an authOTT to its requester; a
            // later one finds it taken and is refused, its record deleted.
            if status == 200 { writes.append(.claimAccessNumber(authOTT: authOTT, wid: record.wid)) }
            writes.append(.recordStatus(status))
            return FinalStepPlan(writes: writes, verdict: verdict, ifRefused: ([.deleteAuth], nil))
        }
    }

    /// The plan's shape when it is nothing but the record's single use and, on a 200, the
    /// session it opens (no counter to write, nothing conditional): the one shape a backend may
    /// apply as one statement of its own (PostgreSQL's `UseDirectAuth`). Nil for any other plan.
    var singleUse: SingleUse? {
        guard verdict != nil, writes.first == .deleteAuth else { return nil }
        switch writes.count {
        case 1: return SingleUse(session: nil)
        case 2:
            guard case .openSession(let session, let userID) = writes[1] else { return nil }
            return SingleUse(session: (session, userID))
        default: return nil
        }
    }

    /// What a `singleUse` plan writes besides deleting the record.
    struct SingleUse: Sendable {
        /// The session it opens, and for which user.
        var session: (session: NewSession, userID: String)?
    }

    /// Whether the plan writes nothing but the record's deletion: for a record the backend
    /// holds in memory (`PendingAuthStore`), already taken, it then writes nothing at all.
    var writesOnlyTheRecord: Bool { writes.allSatisfy { $0 == .deleteAuth } }

    /// Applies the writes in order with `apply` (a backend's SQL, inside its transaction).
    func execute(_ apply: (FinalStepWrite) throws -> Applied) rethrows -> AuthVerdict? {
        var outcome = verdict
        for write in writes {
            switch try apply(write) {
            case .done: break
            case .granted(let grant): outcome?.authorization = grant
            case .refused:
                for write in ifRefused.writes { _ = try apply(write) }
                return ifRefused.verdict
            }
        }
        return outcome
    }

    /// The same, for a backend whose statements are asynchronous.
    func execute(_ apply: (FinalStepWrite) async throws -> Applied) async rethrows -> AuthVerdict? {
        var outcome = verdict
        for write in writes {
            switch try await apply(write) {
            case .done: break
            case .granted(let grant): outcome?.authorization = grant
            case .refused:
                for write in ifRefused.writes { _ = try await apply(write) }
                return ifRefused.verdict
            }
        }
        return outcome
    }
}
