import Hummingbird
import Logging

/// One log line per request: method, the route's pattern (`/rps/signature/{mpinID}`, never the
/// path itself, nor the query: a path carries an identity and a query carries the regOTT or
/// a signature), status and duration. Bodies and headers are never logged.
struct RequestLogMiddleware<Context: RequestContext>: RouterMiddleware {
    let logger: Logger
    var level: Logger.Level = .info

    func handle(_ request: Request, context: Context,
                next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        Self.log(to: logger, level: level, method: request.method, route: context.endpointPath,
                 status: response.status.code, elapsed: ContinuousClock.now - start)
        return response
    }

    /// The line, also written by `LoginStepMiddleware` for the login requests it answers.
    static func log(to logger: Logger, level: Logger.Level = .info, method: HTTPRequest.Method, route: String?,
                    status: Int, elapsed: Duration) {
        logger.log(level: level, "request", metadata: [
            "method": "\(method.rawValue)",
            "route": "\(route ?? "-")",
            "status": "\(status)",
            "ms": "\(milliseconds(elapsed))",
        ])
    }

    private static func milliseconds(_ d: Duration) -> String {
        let (s, atto) = d.components
        let micros = s * 1_000_000 + atto / 1_000_000_000_000
        return "\(micros / 1000).\(String(micros % 1000 + 1000).dropFirst())"
    }
}
