import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import MPinJSON
import MPinWire

/// A D-TA served by another `mpin-server serve --role dta` (or an original D-TA) at `base`
/// (ending in `/`). Its answers are read as the MPinWire types, strictly.
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
        guard let url = URL(string: base + path) else { throw .dtaFailure("Bad D-TA URL") }
        let data: Data, response: URLResponse
        do { (data, response) = try await session.data(from: url) } catch {
            throw .dtaFailure("D-TA unreachable")
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200, let value = try? JSONDecoding.decode(T.self, from: Array(data)) else {
            throw .dtaFailure("D-TA refused the request (\(status))")
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
