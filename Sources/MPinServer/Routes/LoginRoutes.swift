import Hummingbird
import Logging
import MPinWire

/// The three requests of every login (pass 1, pass 2 and the demo RPA's final step), each in a
/// router group of its own whose one middleware is `LoginStepMiddleware`.
///
/// Why a middleware of their own: under load the server's CPU per login is what limits the
/// logins per second, and a login is these three requests. Through the common chain each one
/// took five more async hops (request log, login timing, CORS, errors, body limit), a
/// string-keyed lookup of its step, and the CORS headers inserted at the front of the
/// response's fields; here the same work is one layer, and a successful answer's fields are
/// built in their final order (docs/PERFORMANCE.md §2.2). What a client sees is the common
/// chain's: the same status, body and headers in the same order, every error as the error
/// middleware answers it, CORS headers on every answer. The other methods on these paths get
/// 405 through the same middleware (`endpoint`); OPTIONS finds no route, so the router's own
/// middleware answers it, as on every path (`ServerRoutes`).
struct LoginRoutes: Sendable {
    let rps: RPS
    let decoder: WireBodyDecoder
    let logger: Logger
    let metrics: ServerMetrics?

    func add<Context: RequestContext>(to router: some RouterMethods<Context>) {
        let rps = rps, decoder = decoder
        let prefix = rps.config.rpsPrefix
        group(router, .pass1).endpoint("\(prefix)/pass1", .post) { request, context -> Response in
            let req = try decoder.decode(Pass1Request.self, from: try await Self.body(request, decoder), refusal: .invalidPassBody)
            return .loginAnswer(try await rps.pass1(req, source: context.clientAddress))
        }
        group(router, .pass2).endpoint("\(prefix)/pass2", .post) { request, context -> Response in
            let req = try decoder.decode(Pass2Request.self, from: try await Self.body(request, decoder), refusal: .invalidPassBody)
            return .loginAnswer(try await rps.pass2(req, source: context.clientAddress))
        }
        group(router, .authenticate).endpoint("mpinAuthenticate", .post) { request, context -> Response in
            let req = try decoder.decode(AuthenticateRequest.self, from: try await Self.body(request, decoder))
            let reply = try await rps.rpaAuthenticate(req, source: context.clientAddress)
            return .loginAnswer(reply.body, status: reply.status)
        }
    }

    /// A group for one step's route, with the step's middleware.
    private func group<Context: RequestContext>(_ router: some RouterMethods<Context>,
                                                _ step: ServerMetrics.LoginStep) -> RouterGroup<Context> {
        router.group().add(middleware: LoginStepMiddleware<Context>(step: step, maxBodyBytes: decoder.maxBodyBytes,
                                                                   logger: logger, metrics: metrics))
    }

    /// The body, which `LoginStepMiddleware` has read already (within the limit).
    private static func body(_ request: Request, _ decoder: WireBodyDecoder) async throws -> ByteBuffer {
        var request = request
        return try await request.collectBody(upTo: decoder.maxBodyBytes)
    }
}

/// What the common middleware chain does for a request (`ServerRoutes`), done in one layer for
/// one login step: the body read within the limit (413 beyond), errors turned into their JSON
/// answers with the CORS headers first, the step's timing and the request's log line.
struct LoginStepMiddleware<Context: RequestContext>: RouterMiddleware {
    let step: ServerMetrics.LoginStep
    let maxBodyBytes: Int
    let logger: Logger
    let metrics: ServerMetrics?

    func handle(_ request: Request, context: Context,
                next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        var response: Response
        do {
            var request = request
            do { _ = try await request.collectBody(upTo: maxBodyBytes) } catch { throw ServerError.bodyTooLarge }
            response = try await next(request, context)
        } catch {
            // What ErrorResponseMiddleware answers (these handlers throw no OAuthError), with
            // the CORS headers first as OriginalCORSMiddleware puts them.
            response = ServerError(answering: error).jsonResponse()
            response.headers.insert(contentsOf: originalCORSFields, at: response.headers.startIndex)
        }
        let elapsed = ContinuousClock.now - start
        metrics?.recordStep(step, elapsed)
        RequestLogMiddleware<Context>.log(to: logger, method: request.method, route: context.endpointPath,
                                          status: response.status.code, elapsed: elapsed)
        return response
    }
}

/// The fields of a successful login answer in the order the common chain gives them: the CORS
/// headers, then the content type.
private let loginAnswerFields: HTTPFields = {
    var fields = originalCORSFields
    fields[.contentType] = "application/json; charset=UTF-8"
    return fields
}()

extension Response {
    /// A login step's JSON answer with its CORS headers, built in one go, the body written
    /// without the generic encoder (`DirectJSONEncodable`).
    static func loginAnswer(_ body: some DirectJSONEncodable, status: Int = 200) -> Response {
        Response(status: .init(code: status), headers: loginAnswerFields,
                 body: .init(byteBuffer: ByteBuffer(bytes: body.jsonBytes)))
    }
}
