import Hummingbird

/// Times the requests of a login (pass 1, pass 2 and the final step, whichever route carries
/// it) into `ServerMetrics`, by the route's pattern: never by path or query.
struct LoginTimingMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServerMetrics
    /// Route pattern → step, e.g. `/rps/pass1` → `.pass1`.
    let steps: [String: ServerMetrics.LoginStep]

    init(metrics: ServerMetrics, rpsPrefix: String) {
        self.metrics = metrics
        steps = [
            "/\(rpsPrefix)/pass1": .pass1, "/\(rpsPrefix)/pass2": .pass2,
            "/mpinAuthenticate": .authenticate, "/authenticate": .authenticate, "/\(rpsPrefix)/authenticate": .authenticate,
        ]
    }

    func handle(_ request: Request, context: Context,
                next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        defer {
            if let route = context.endpointPath, let step = steps[route] {
                metrics.recordStep(step, ContinuousClock.now - start)
            }
        }
        return try await next(request, context)
    }
}
