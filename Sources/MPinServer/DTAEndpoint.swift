import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MPinWire

/// How the RPS reaches a D-TA: in-process (embedded) or over HTTP (roles run apart). Either
/// way the request is the signed, expiring one of Appendix A and the D-TA checks it.
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
        guard r.day == day else { throw ServerError(500, "D-TA date mismatch") }
        return r.share
    }
}

/// A D-TA served by another `mpin-server serve --role dta` at `base` (ending in `/`).
struct RemoteDTA: DTAEndpoint {
    let base: String
    private let session: URLSession

    init(base: String) {
        self.base = base.hasSuffix("/") ? base : base + "/"
        let c = URLSessionConfiguration.ephemeral
        c.timeoutIntervalForRequest = 10
        session = URLSession(configuration: c)
    }

    private func get<T: Decodable>(_ path: String, _ type: T.Type) async throws(ServerError) -> T {
        guard let url = URL(string: base + path) else { throw ServerError(502, "Bad D-TA URL") }
        let data: Data, response: URLResponse
        do { (data, response) = try await session.data(from: url) } catch {
            throw ServerError(502, "D-TA unreachable")
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200, let value = try? JSONDecoder().decode(T.self, from: data) else {
            throw ServerError(502, "D-TA refused the request (\(status))")
        }
        return value
    }

    func serverSecret(expires: String, signature: String) async throws(ServerError) -> ServerSecretResponse {
        try await get("serverSecret?" + FormEncoding.encode([("expires", expires), ("signature", signature)]),
                      ServerSecretResponse.self)
    }
    func clientSecret(_ params: ClientSecretParams) async throws(ServerError) -> ClientSecretResponse {
        try await get("clientSecret?" + params.query, ClientSecretResponse.self)
    }
    func timePermit(hashMpinID: String, signature: String, day: Int32) async throws(ServerError) -> String {
        try await get("timePermit?" + FormEncoding.encode([("hash_mpin_id", hashMpinID), ("signature", signature)]),
                      DTATimePermitResponse.self).timePermit
    }
}

/// The D-TA's own HTTP endpoints (query parsing → `DTA`).
struct DTAHandlers: Sendable {
    let dta: DTA

    private func pairs(_ query: String?) throws(ServerError) -> [(String, String)] {
        guard let p = FormEncoding.decode(query ?? "") else { throw ServerError(403, "Invalid query") }
        return p
    }

    func clientSecret(query: String?) throws(ServerError) -> ClientSecretResponse {
        let params: ClientSecretParams
        do { params = try ClientSecretParams(pairs: try pairs(query)) } catch let e as ServerError { throw e } catch {
            throw ServerError(403, "\(error)")
        }
        return try dta.clientSecret(params, now: Date())
    }

    func timePermit(query: String?) throws(ServerError) -> DTATimePermitResponse {
        let p = try pairs(query)
        func get(_ k: String) -> String? { p.last(where: { $0.0 == k })?.1 }
        let r = try dta.timePermit(hashMpinID: get("hash_mpin_id"), signature: get("signature"), now: Date())
        return DTATimePermitResponse(timePermit: r.share, version: dta.index == 2 ? "3" : nil)
    }

    func serverSecret(query: String?) throws(ServerError) -> ServerSecretResponse {
        let p = try pairs(query)
        func get(_ k: String) -> String? { p.last(where: { $0.0 == k })?.1 }
        return try dta.serverSecret(expires: get("expires"), signature: get("signature"), now: Date())
    }
}
