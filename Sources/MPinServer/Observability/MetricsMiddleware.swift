import Hummingbird

/// Times the final steps that reach the common middleware chain (the RPA's token check
/// `/authenticate` and the mobile's `/{rpsPrefix}/authenticate`) into `ServerMetrics`, by the
/// route's pattern: never by path or query. The three login requests time themselves
/// (`LoginStepMiddleware`).
struct LoginTimingMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServerMetrics
    /// Route pattern → step, e.g. `/rps/authenticate` → `.authenticate`.
    let steps: [String: ServerMetrics.LoginStep]

    init(metrics: ServerMetrics, rpsPrefix: String) {
        self.metrics = metrics
        steps = ["/authenticate": .authenticate, "/\(rpsPrefix)/authenticate": .authenticate]
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
