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
        let logger = logger, level = level
        logger.log(level: level, "request", metadata: [
            "method": "\(request.method.rawValue)",
            "route": "\(context.endpointPath ?? "-")",
            "status": "\(response.status.code)",
            "ms": "\(Self.milliseconds(ContinuousClock.now - start))",
        ])
        return response
    }

    private static func milliseconds(_ d: Duration) -> String {
        let (s, atto) = d.components
        let micros = s * 1_000_000 + atto / 1_000_000_000_000
        return "\(micros / 1000).\(String(micros % 1000 + 1000).dropFirst())"
    }
}
