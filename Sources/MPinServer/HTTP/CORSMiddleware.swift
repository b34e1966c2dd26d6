import Hummingbird
import MPinWire

/// The four headers, built once: a generic type cannot store a static, and building them per
/// response cost four allocations and a string concatenation (issue 27 item 3). `LoginRoutes`
/// builds its answers with them.
let originalCORSFields: HTTPFields = [
    .accessControlAllowOrigin: "*",
    .accessControlAllowCredentials: "true",
    .accessControlAllowMethods: "GET,PUT,POST,DELETE,OPTIONS",
    .accessControlAllowHeaders: "Content-Type, Depth, User-Agent, X-File-Size, X-Requested-With, "
        + "X-Requested-By, If-Modified-Since, X-File-Name, Cache-Control, WWW-Authenticate",
]

/// The original RPS's CORS behaviour: every response carries the same four headers (first,
/// as the original wrote them), and an `OPTIONS` request to any path is answered 200 at once,
/// before its body is read or a route is looked up. Except `/authorize/status`, which only
/// the provider's own page calls (same origin): it gets no CORS headers, so that no other
/// site's script may read a login's state (and never `*` with credentials, issue 29).
struct OriginalCORSMiddleware<Context: RequestContext>: RouterMiddleware {
    static var fields: HTTPFields { originalCORSFields }

    func handle(_ request: Request, context: Context,
                next: (Request, Context) async throws -> Response) async throws -> Response {
        if request.uri.path == "/authorize/status" { return try await next(request, context) }
        var response = request.method == .options
            ? JSONResponse(StatusResponse(message: "options request")).response()
            : try await next(request, context)
        response.headers.insert(contentsOf: Self.fields, at: response.headers.startIndex)
        return response
    }
}
