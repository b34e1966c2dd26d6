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

    /// The router: every route in one table, in groups that each carry their middleware.
    /// * The login requests (`LoginRoutes`): one lean middleware per step (`LoginStepMiddleware`).
    /// * `/health` and `/metrics` (with `metrics`): the request log, no CORS.
    /// * Every other route: the common chain (`addCommonMiddleware`).
    /// * Requests no route takes (unknown paths, CORS preflights, unknown methods): the common
    ///   chain too, as the router's own middleware.
    /// `metrics`: with `/health` and `/metrics`, and login steps timed.
    /// `metricsToken`: the bearer token that opens `/metrics` to other addresses than loopback.
    func router(logger: Logger, metrics: ServerMetrics? = nil, storage: (any ServerStorage)? = nil,
                metricsToken: String? = nil) -> Router<ServerRequestContext> {
        let router = Router(context: ServerRequestContext.self)
        let decoder = WireBodyDecoder(maxBodyBytes: maxBodyBytes)
        if let rps { LoginRoutes(rps: rps, decoder: decoder, logger: logger, metrics: metrics).add(to: router) }
        if let metrics {
            HealthRoutes(storage: storage, metrics: metrics, metricsToken: metricsToken, logger: logger)
                .add(to: router.group().add(middleware: RequestLogMiddleware(logger: logger)))
        }
        let routes = addCommonMiddleware(to: router.group(), logger: logger, metrics: metrics)
        if let dta = standaloneDTA { routes.addRoutes(dta.routes()) }
        if let dta = embeddedDTA { routes.addRoutes(dta.routes(), atPath: "dta") }
        if let rps {
            routes.addRoutes(rps.rootRoutes(decoder: decoder))
            routes.addRoutes(rps.demoRPARoutes(decoder: decoder))
            routes.addRoutes(rps.publicRoutes(decoder: decoder), atPath: RouterPath(rps.config.rpsPrefix))
            if let oidc {
                routes.addRoutes(oidc.rootRoutes(decoder: decoder))
                routes.addRoutes(oidc.prefixRoutes(decoder: decoder), atPath: RouterPath(rps.config.rpsPrefix))
            }
        }
        // Hummingbird wraps its answer for a request no route takes in the router's own
        // middleware, and wraps a route in the router's middleware added before the route: added
        // last, the chain applies to those requests alone, and no route gets it twice.
        addCommonMiddleware(to: router, logger: logger, metrics: metrics)
        return router
    }

    /// The middleware every answer but the login requests' and `/health`'s goes through,
    /// outermost first: the request log, the timing of the final steps routed here
    /// (`LoginTimingMiddleware`), CORS, errors as JSON, the body limit.
    @discardableResult
    private func addCommonMiddleware<Routes: RouterMethods<ServerRequestContext>>(
        to routes: Routes, logger: Logger, metrics: ServerMetrics?
    ) -> Routes {
        _ = routes.add(middleware: RequestLogMiddleware(logger: logger))
        if let metrics {
            _ = routes.add(middleware: LoginTimingMiddleware(metrics: metrics, rpsPrefix: rps?.config.rpsPrefix ?? "rps"))
        }
        _ = routes.add(middleware: OriginalCORSMiddleware())
        _ = routes.add(middleware: ErrorResponseMiddleware())
        _ = routes.add(middleware: BodyLimitMiddleware(maxBytes: maxBodyBytes))
        return routes
    }
}
