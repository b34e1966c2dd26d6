import Foundation
import Hummingbird
import MPinWire

extension DTA {
    /// A D-TA's endpoints (Appendix A), at the root when it runs alone, under `/dta/` when
    /// embedded with the RPS. Arguments come in the query; a malformed one is a 403.
    func routes<Context: RequestContext>() -> RouteCollection<Context> {
        let routes = RouteCollection(context: Context.self)
        routes.endpoint("clientSecret", .get) { request, _ in
            let params: ClientSecretParams
            do { params = try ClientSecretParams(pairs: try Self.query(request).all) } catch let e as WireError {
                throw ServerError.invalidArgument(e.description)
            }
            return JSONResponse(try self.clientSecret(params, now: Date()))
        }
        routes.endpoint("timePermit", .get) { request, _ in
            let query = try Self.query(request)
            let permit = try self.timePermit(hashMpinID: query["hash_mpin_id"], signature: query["signature"], now: Date())
            return JSONResponse(DTATimePermitResponse(timePermit: permit.share, version: self.index == 2 ? "3" : nil))
        }
        routes.endpoint("serverSecret", .get) { request, _ in
            let query = try Self.query(request)
            return JSONResponse(try self.serverSecret(expires: query["expires"], signature: query["signature"], now: Date()))
        }
        routes.endpoint("status", .get) { _, _ in JSONResponse(StatusResponse(message: "OK")) }
        return routes
    }

    private static func query(_ request: Request) throws(ServerError) -> QueryParameters {
        guard let query = QueryParameters(request.uri.query) else { throw .invalidArgument("Invalid query") }
        return query
    }
}
