import Foundation
import MPinCrypto
import MPinWire

/// A Distributed Trusted Authority: holds one master-secret share and issues its half of
/// server secrets, client secrets and time permits (docs/PROTOCOL.md Appendix A). Every request
/// must carry a valid HMAC signature of the RPS; signatures expire. The share never leaves
/// this value.
package struct DTA: Sendable {
    /// 1 = the local (customer) D-TA the RPS calls, 2 = the remote one the client calls.
    package let index: Int
    let appID: String
    let appKey: String
    private let share: [UInt8]
    let startTime: Date

    init(index: Int, appID: String, appKey: String, share: [UInt8], startTime: Date = Date()) {
        self.index = index; self.appID = appID; self.appKey = appKey; self.share = share; self.startTime = startTime
    }

    /// `GET serverSecret?app_id&expires&signature` → this D-TA's share of the server secret.
    func serverSecret(expires: String?, signature: String?, now: Date) throws(ServerError) -> ServerSecretResponse {
        guard let expires, let signature else { throw ServerError.invalidArgument("Missing argument") }
        guard WireSignature.verify(signature, message: WireSignature.serverSecretMessage(appID: appID, expires: expires),
                                   key: appKey) else { throw ServerError.invalidSignature }
        try checkExpiry(expires, now: now)
        guard let ss = try? MPin.serverSecret(masterSecret: share) else { throw ServerError.internal("Generation failed") }
        return ServerSecretResponse(serverSecret: Hex.encode(ss), startTime: WireTime.signatureExpires(startTime))
    }

    /// `GET clientSecret?{params}` → this D-TA's share of the client secret of `hash_mpin_id`.
    func clientSecret(_ params: ClientSecretParams, now: Date) throws(ServerError) -> ClientSecretResponse {
        guard let hashed = Hex.decode(params.hashMpinID, length: 32) else {
            throw ServerError.invalidArgument("Invalid hash_mpin_id")
        }
        let message = WireSignature.clientSecretMessage(appID: appID, hashMpinID: params.hashMpinID,
                                                        hashUserID: params.hashUserID, expires: params.expires)
        guard WireSignature.verify(params.signature, message: message, key: appKey) else {
            throw ServerError.invalidSignature
        }
        try checkExpiry(params.expires, now: now)
        guard let cs = try? MPin.clientSecret(masterSecret: share, hashedID: hashed) else {
            throw ServerError.internal("Generation failed")
        }
        return ClientSecretResponse(clientSecret: Hex.encode(cs), version: index == 2 ? "3" : nil)
    }

    /// `GET timePermit?hash_mpin_id&signature` → this D-TA's time-permit share for `day`.
    /// The signature covers the day, so it expires at the end of that day (the original signed
    /// only the hash, valid forever); the previous day is accepted during the first hour, as
    /// the verifier does.
    func timePermit(hashMpinID: String?, signature: String?, now: Date) throws(ServerError) -> (day: Int32, share: String) {
        guard let hashMpinID, let signature else { throw ServerError.invalidArgument("Missing argument") }
        guard let hashed = Hex.decode(hashMpinID, length: 32) else { throw ServerError.invalidArgument("Invalid hash_mpin_id") }
        let today = WireTime.day(now)
        var day: Int32? = nil
        for d in [today, today - 1] where d == today || WireTime.isGraceHour(now) {
            if WireSignature.verify(signature, message: DTA.timePermitMessage(appID: appID, hashMpinID: hashMpinID, day: d),
                                    key: appKey) { day = d; break }
        }
        guard let day else { throw ServerError.invalidSignature }
        guard let tp = try? MPin.timePermit(date: day, masterSecret: share, hashedID: hashed) else {
            throw ServerError.internal("Generation failed")
        }
        return (day, Hex.encode(tp))
    }

    /// The message of a day-bound time-permit signature.
    static func timePermitMessage(appID: String, hashMpinID: String, day: Int32) -> String {
        "timePermit" + appID + (Hex.canonical(hashMpinID) ?? hashMpinID) + String(day)
    }

    private func checkExpiry(_ expires: String, now: Date) throws(ServerError) {
        guard let e = WireTime.parseSignatureExpiresDate(expires) else { throw ServerError.invalidArgument("Invalid expires") }
        guard now <= e else { throw ServerError.expired("Request expired") }
    }
}
