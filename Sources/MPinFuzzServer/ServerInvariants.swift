import Foundation
import Hummingbird
import MPinJSON

/// What every response of the server must satisfy, whatever the request. Each check can fail:
/// a failure stops the run with a message naming the broken property (never the input's
/// values: libFuzzer keeps the input itself).
///
/// - No 5xx. A server with a local SQLite database and its D-TAs in process has no fault a
///   client can cause: 500 (internal), 502 (D-TA unreachable) and 503 (storage or capacity)
///   all mean a bug here. (`--role rps` with remote D-TAs can answer 502; not served here.)
/// - No error escapes the router: the error middleware turns every error into a response.
/// - Every response but `GET /health` and `GET /metrics` (routed without the CORS middleware)
///   carries the CORS headers of the original server; `routesWithoutCORS` carry none, and no
///   response carries `Access-Control-Allow-Credentials`.
/// - Every error (4xx) is JSON, `{"message": string}`, or on the OpenID provider's endpoints
///   `{"error": string, "error_description": string}` too; a 401 with `{"message"}` carries
///   `WWW-Authenticate` (PROTOCOL.md §2.1).
/// - No error body and no log line repeats a secret-looking value of the request (a regOTT,
///   an access code, an ID, a signature: see `FuzzRequest.secretLookingValues`).
enum ServerInvariants {
    static func run(_ input: FuzzRequest) {
        _ = logs.take()
        let request = input.request
        let context = server.context()
        let outcome = runBlocking { () -> Result<(Response, [UInt8]), any Error> in
            do { return .success(try await server.respond(request, context: context)) } catch { return .failure(error) }
        }
        let (response, body): (Response, [UInt8])
        switch outcome {
        case .success(let r): (response, body) = r
        case .failure(let error): fail("\(input.route.pattern): an error escaped the router: \(type(of: error))")
        }
        let status = response.status.code
        let route = input.route.pattern
        if status >= 500 { fail("\(route): status \(status)") }
        let segments = request.uri.path.split(separator: "/")
        let beforeMiddleware = request.method == .get && segments.count == 1
            && routesBeforeMiddleware.contains(String(segments[0]))
        // Any origin is never combined with credentials (docs/SECURITY.md §5).
        if response.headers[.accessControlAllowCredentials] != nil { fail("\(route): Access-Control-Allow-Credentials") }
        if !beforeMiddleware {
            if routesWithoutCORS.contains(route), request.uri.path == "/" + route {
                if response.headers[.accessControlAllowOrigin] != nil || response.headers[.accessControlAllowCredentials] != nil {
                    fail("\(route): status \(status) with CORS headers")
                }
            } else if response.headers[.accessControlAllowOrigin] != "*" {
                fail("\(route): status \(status) without CORS headers")
            }
            // A preflight the CORS middleware does not answer finds no route: the router's 404.
            let unansweredPreflight = request.method == .options && routesWithoutCORS.contains(route)
            if status >= 400, !unansweredPreflight { checkErrorBody(route: route, status: status, response: response, body: body) }
        }
        let secrets = input.secretLookingValues
        if status >= 400, !secrets.isEmpty {
            let text = String(decoding: body, as: UTF8.self)
            if secrets.contains(where: { text.contains($0) }) { fail("\(route): the error body repeats a request value") }
        }
        for line in logs.take() where secrets.contains(where: { line.contains($0) }) {
            fail("\(route): a log line repeats a request value")
        }
    }

    /// The error body is the server's `{"message"}` or, where OAuth errors are answered,
    /// `{"error", "error_description"}`; both are JSON objects of strings.
    static func checkErrorBody(route: String, status: Int, response: Response, body: [UInt8]) {
        guard response.headers[.contentType]?.hasPrefix("application/json") == true else {
            fail("\(route): status \(status) without a JSON content type")
        }
        guard case .object(let members)? = try? JSONParser().parse(body) else {
            fail("\(route): status \(status) body is not a JSON object")
        }
        let keys = members.map(\.key).sorted()
        guard members.allSatisfy({ if case .string = $0.value { true } else { false } }) else {
            fail("\(route): status \(status) error members are not strings")
        }
        switch keys {
        case ["message"]:
            if status == 401, response.headers[.wwwAuthenticate] == nil { fail("\(route): 401 without WWW-Authenticate") }
        case ["error", "error_description"] where oauthRoutes.contains(route):
            break
        default:
            fail("\(route): status \(status) error body has keys \(keys)")
        }
    }

    /// Every route of the table answers its own methods (with a placeholder parameter and no
    /// body) with something other than the router's "no such path", and a CORS preflight with
    /// 200: a route misspelt in the table, or no longer served, stops the harness at start.
    static func checkRouteTable() {
        for (index, route) in fuzzRoutes.enumerated() {
            for method: UInt8 in [0, 1, 0x80 + 6] where method < 0x80 ? Int(method) < route.methods.count : true {
                let parameter = route.pattern.contains(":") ? "x" : ""
                guard let input = FuzzRequest([UInt8(index), method] + Array((parameter + "\n\n\n").utf8),
                                              clientID: server.clientID) else { continue }
                let request = input.request
                let context = server.context()
                let outcome = runBlocking { () -> (Response, [UInt8])? in try? await server.respond(request, context: context) }
                guard let outcome else { fail("route table: \(route.pattern) threw") }
                let (response, body) = outcome
                let notFound = response.status.code == 404 && String(decoding: body, as: UTF8.self).contains("URI NOT FOUND")
                if notFound, !(request.method == .options && routesWithoutCORS.contains(route.pattern)),
                   !routesHiddenFromTheNetwork.contains(route.pattern) {
                    fail("route table: \(request.method) /\(route.pattern) is not served")
                }
                if request.method == .options, response.status.code != 200, !routesWithoutCORS.contains(route.pattern) {
                    fail("route table: OPTIONS /\(route.pattern) refused")
                }
            }
        }
        _ = logs.take()
    }

    static func fail(_ what: String) -> Never {
        fatalError("server invariant broken: \(what)")
    }
}
