import Hummingbird
import Logging

/// What one process serves, declared per role: the RPS (its public API under the prefix, its
/// root endpoints), the demo RPA, and a D-TA at the root (alone) or under `/dta/` (embedded).
struct ServerRoutes: Sendable {
    /// The RPS with the authentication server and demo-RPA endpoints, when hosted.
    var rps: RPS?
    /// The second D-TA under `/dta/`, when embedded with the RPS.
    var embeddedDTA: DTA?
    /// A D-TA running alone, served at the root as in Appendix A.
    var standaloneDTA: DTA?
    /// The MFA platform and OpenID provider, hosted with the RPS.
    var oidc: OIDCProvider?
    var maxBodyBytes: Int

    /// The router, with the middleware every response goes through (outermost first): the
    /// request log, CORS, errors as JSON, the body limit; the login requests do the same inline
    /// (`LoginRoutes`).
    /// `metrics`: with `/health` and `/metrics`, and login steps timed.
    /// `metricsToken`: the bearer token that opens `/metrics` to other addresses than loopback.
    func router(logger: Logger, metrics: ServerMetrics? = nil, storage: (any ServerStorage)? = nil,
                metricsToken: String? = nil) -> Router<ServerRequestContext> {
        let router = Router(context: ServerRequestContext.self)
        let decoder = WireBodyDecoder(maxBodyBytes: maxBodyBytes)
        // The login requests first: the middleware below applies only to routes added after it.
        if let rps { LoginRoutes(rps: rps, decoder: decoder, logger: logger, metrics: metrics).add(to: router) }
        router.add(middleware: RequestLogMiddleware(logger: logger))
        if let metrics {
            router.add(middleware: LoginTimingMiddleware(metrics: metrics, rpsPrefix: rps?.config.rpsPrefix ?? "rps"))
            HealthRoutes(storage: storage, metrics: metrics, metricsToken: metricsToken, logger: logger).add(to: router)
        }
        router.add(middleware: OriginalCORSMiddleware())
        router.add(middleware: ErrorResponseMiddleware())
        router.add(middleware: BodyLimitMiddleware(maxBytes: maxBodyBytes))
        if let dta = standaloneDTA { router.addRoutes(dta.routes()) }
        if let dta = embeddedDTA { router.addRoutes(dta.routes(), atPath: "dta") }
        if let rps {
            router.addRoutes(rps.rootRoutes(decoder: decoder))
            router.addRoutes(rps.demoRPARoutes(decoder: decoder))
            router.addRoutes(rps.publicRoutes(decoder: decoder), atPath: RouterPath(rps.config.rpsPrefix))
            if let oidc {
                router.addRoutes(oidc.rootRoutes(decoder: decoder))
                router.addRoutes(oidc.prefixRoutes(decoder: decoder), atPath: RouterPath(rps.config.rpsPrefix))
            }
        }
        return router
    }
}
