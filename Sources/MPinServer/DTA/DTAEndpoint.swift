import Foundation
import MPinWire

/// How the RPS reaches a D-TA: in-process (`LocalDTA`, embedded) or over HTTP (`RemoteDTA`,
/// roles run apart). Either way the request is the signed, expiring one of Appendix A and the
/// D-TA checks it.
protocol DTAEndpoint: Sendable {
    func serverSecret(expires: String, signature: String) async throws(ServerError) -> ServerSecretResponse
    func clientSecret(_ params: ClientSecretParams) async throws(ServerError) -> ClientSecretResponse
    /// The share for the day the signature covers.
    func timePermit(hashMpinID: String, signature: String, day: Int32) async throws(ServerError) -> String
}

/// A D-TA in this process.
struct LocalDTA: DTAEndpoint {
    let dta: DTA

    func serverSecret(expires: String, signature: String) async throws(ServerError) -> ServerSecretResponse {
        try dta.serverSecret(expires: expires, signature: signature, now: Date())
    }
    func clientSecret(_ params: ClientSecretParams) async throws(ServerError) -> ClientSecretResponse {
        try dta.clientSecret(params, now: Date())
    }
    func timePermit(hashMpinID: String, signature: String, day: Int32) async throws(ServerError) -> String {
        let r = try dta.timePermit(hashMpinID: hashMpinID, signature: signature, now: Date())
        guard r.day == day else { throw .internal("D-TA date mismatch") }
        return r.share
    }
}
