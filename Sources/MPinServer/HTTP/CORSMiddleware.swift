import Hummingbird
import MPinWire

/// The three headers, built once: a generic type cannot store a static, and building them per
/// response cost allocations and a string concatenation (docs/PERFORMANCE.md §2.2). `LoginRoutes`
/// builds its answers with them. No `Access-Control-Allow-Credentials` (docs/SECURITY.md §5): these
/// flows send no cookie and no HTTP authentication, and `*` with credentials is what a browser must
/// never be told.
let originalCORSFields: HTTPFields = [
    .accessControlAllowOrigin: "*",
    .accessControlAllowMethods: "GET,PUT,POST,DELETE,OPTIONS",
    .accessControlAllowHeaders: "Content-Type, Depth, User-Agent, X-File-Size, X-Requested-With, "
        + "X-Requested-By, If-Modified-Since, X-File-Name, Cache-Control, WWW-Authenticate",
]

/// The original RPS's CORS behaviour for the one flow that needs it: the browser SDK on a
/// relying party's page, which calls the RPS's API, the D-TA, the RPA's login endpoints and
/// the OpenID provider's public documents (discovery, keys, service details). Its responses
/// carry the headers (first, as the original wrote them), and an `OPTIONS` request to such a
/// path is answered 200 at once, before its body is read or a route is looked up.
/// The paths no other site's script may read get no CORS headers at all (docs/SECURITY.md §5):
/// the provider's own pages and their poll (same origin), the token and userinfo endpoints
/// (client secrets and bearer tokens; relying parties call them from their servers), the
/// activation page and the D-TA's server secret (RPS to D-TA only). `/health` and `/metrics`
/// are routed without this middleware (`ServerRoutes`).
struct OriginalCORSMiddleware<Context: RequestContext>: RouterMiddleware {
    static var fields: HTTPFields { originalCORSFields }

    /// The paths answered without CORS headers.
    static var sameOriginPaths: Set<String> {
        ["/authorize", "/authorize/status", "/oidc/token", "/oidc/userinfo", "/mpinActivate", "/serverSecret",
         "/dta/serverSecret"]
    }

    func handle(_ request: Request, context: Context,
                next: (Request, Context) async throws -> Response) async throws -> Response {
        if Self.sameOriginPaths.contains(request.uri.path) { return try await next(request, context) }
        var response = request.method == .options
            ? JSONResponse(StatusResponse(message: "options request")).response()
            : try await next(request, context)
        response.headers.insert(contentsOf: Self.fields, at: response.headers.startIndex)
        return response
    }
}
