import Hummingbird

/// One route the server registers, as the fuzzer reaches it: the path pattern (`:name` is a
/// path parameter) and the methods its handler serves. The endpoint helper answers 405 to the
/// other common methods; the harness sends those too (see `FuzzRequest`).
struct FuzzRoute: Sendable {
    let pattern: String
    let methods: [HTTPRequest.Method]

    init(_ pattern: String, _ methods: HTTPRequest.Method...) {
        self.pattern = pattern
        self.methods = methods
    }
}

/// Every route of a server with all roles (`ServerRole.all`): the embedded D-TA under `dta/`,
/// the RPS's root, demo-RPA and `rps/` routes, the OpenID provider's, `/health` and
/// `/metrics`. A D-TA alone serves the same handlers at the root, and `--role rps` only swaps
/// the D-TA client, so this table covers the handlers of every role.
///
/// One entry per line, in the form `FuzzRoute("path", .method, …),`: Tests/Fuzz/make-corpus.py
/// reads this table (the corpus names routes by their index here) and checks it against the
/// routes declared in Sources/MPinServer, so a route added there and not here stops `make fuzz`.
/// The order is the corpus format: append, never reorder.
let fuzzRoutes: [FuzzRoute] = [
    // D-TA (Routes/DTARoutes.swift), embedded under dta/.
    FuzzRoute("dta/clientSecret", .get),
    FuzzRoute("dta/timePermit", .get),
    FuzzRoute("dta/serverSecret", .get),
    FuzzRoute("dta/status", .get),
    // RPS at the root (Routes/RPSRoutes.swift rootRoutes).
    FuzzRoute("status", .get),
    FuzzRoute("authenticate", .post),
    FuzzRoute("user/:mpinID", .post),
    FuzzRoute("mpinActivate", .get, .post),
    // Demo RPA (demoRPARoutes).
    FuzzRoute("mpinAuthenticate", .post),
    FuzzRoute("logout", .post),
    // RPS public API under rps/ (publicRoutes), device login included.
    FuzzRoute("rps/clientSettings", .get),
    FuzzRoute("rps/user", .put),
    FuzzRoute("rps/user/:mpinID", .put),
    FuzzRoute("rps/signature/:mpinID", .get),
    FuzzRoute("rps/timePermit/:mpinID", .get),
    FuzzRoute("rps/setupDone/:mpinID", .post),
    FuzzRoute("rps/pass1", .post),
    FuzzRoute("rps/pass2", .post),
    FuzzRoute("rps/authenticate", .post),
    FuzzRoute("rps/regCode", .post),
    FuzzRoute("rps/dvsRegToken", .post),
    FuzzRoute("rps/dvsregister", .post),
    FuzzRoute("rps/dvsVerify", .post),
    FuzzRoute("rps/getAccessNumber", .post),
    FuzzRoute("rps/accessnumber/:accessNumber", .get),
    FuzzRoute("rps/accessnumber", .post),
    // OpenID provider and MFA platform (Routes/MFARoutes.swift).
    FuzzRoute("service", .get),
    FuzzRoute("authorize", .get, .post),
    FuzzRoute("authorize/status", .post),
    FuzzRoute("oidc/token", .post),
    FuzzRoute(".well-known/openid-configuration", .get),
    FuzzRoute("oidc/jwks", .get),
    FuzzRoute("rps/codeStatus", .post),
    // Observability (Observability/HealthRoutes.swift).
    FuzzRoute("health", .get),
    FuzzRoute("metrics", .get),
    // The OpenID provider's UserInfo (docs/MFA.md §7.4).
    FuzzRoute("oidc/userinfo", .get, .post),
]

/// The routes whose errors are OAuth 2.0 errors (`{"error", "error_description"}`) rather than
/// the server's `{"message"}`.
let oauthRoutes: Set<String> = ["authorize", "authorize/status", "oidc/token", "oidc/userinfo"]

/// Routes no other site's script may read (OriginalCORSMiddleware.sameOriginPaths): the
/// provider's own pages (same origin), the token and userinfo endpoints, the activation page and
/// the D-TA's server secret: no CORS headers at all, and no preflight answered
/// (docs/MFA.md §5.3; docs/SECURITY.md §5).
let routesWithoutCORS: Set<String> = ["authorize", "authorize/status", "oidc/token", "oidc/userinfo", "mpinActivate",
                                      "dta/serverSecret"]

/// Routes outside the error middleware (Hummingbird applies a middleware to the routes added
/// after it; `/health` and `/metrics` come before the CORS and error middleware).
let routesBeforeMiddleware: Set<String> = ["health", "metrics"]

/// Routes that answer "no such path" to a caller that is not on loopback and presents no token
/// (`/metrics`, docs/SECURITY.md §5): the harness's requests come from an in-memory channel with no
/// address, so the route table's check expects that answer from them.
let routesHiddenFromTheNetwork: Set<String> = ["metrics"]
