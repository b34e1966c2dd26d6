import Hummingbird
import Logging
import MPinWire

/// The three requests of every login (pass 1, pass 2 and the demo RPA's final step), each
/// answered by one `LoginRouteResponder` registered before the router's middleware
/// (Hummingbird applies a middleware only to the routes added after it).
///
/// Why: under load the server's CPU per login is what limits the logins per second, and a
/// login is these three requests. Through the middleware chain each one took five more async
/// hops (request log, login timing, CORS, errors, body limit), a string-keyed lookup of its
/// step, and the CORS headers inserted at the front of the response's fields; here the same
/// work is done inline, once, and a successful answer's fields are built in their final order
/// (issue 27 item 3, docs/PERFORMANCE.md §2.2). What a client sees is unchanged: the same
/// status, body and headers in the same order, every error as the error middleware answers
/// it, CORS headers on every answer. Other methods on these paths (the 405s, OPTIONS) still go
/// through the middleware chain (`RPSRoutes` declines them, `endpoint(_:_:servedBy:)`).
struct LoginRoutes: Sendable {
    let rps: RPS
    let decoder: WireBodyDecoder
    let logger: Logger
    let metrics: ServerMetrics?

    /// Registers the three POST routes; call before adding any middleware.
    func add<Context: RequestContext>(to router: Router<Context>) {
        let rps = rps, decoder = decoder
        let prefix = rps.config.rpsPrefix
        router.on("\(prefix)/pass1", method: .post, responder: responder(.pass1) { body, context in
            let req = try decoder.decode(Pass1Request.self, from: body, refusal: .invalidPassBody)
            return .loginAnswer(try await rps.pass1(req, source: context.clientAddress))
        })
        router.on("\(prefix)/pass2", method: .post, responder: responder(.pass2) { body, context in
            let req = try decoder.decode(Pass2Request.self, from: body, refusal: .invalidPassBody)
            return .loginAnswer(try await rps.pass2(req, source: context.clientAddress))
        })
        router.on("mpinAuthenticate", method: .post, responder: responder(.authenticate) { body, _ in
            let reply = try await rps.rpaAuthenticate(try decoder.decode(AuthenticateRequest.self, from: body))
            return .loginAnswer(reply.body, status: reply.status)
        })
    }

    private func responder<Context: RequestContext>(
        _ step: ServerMetrics.LoginStep,
        _ handle: @escaping @Sendable (ByteBuffer, Context) async throws -> Response
    ) -> LoginRouteResponder<Context> {
        LoginRouteResponder(step: step, maxBodyBytes: decoder.maxBodyBytes, logger: logger, metrics: metrics, handle: handle)
    }
}

/// One login request, with what the middleware chain would do for it done inline: the body
/// read within the limit (413 beyond), errors turned into their JSON answers, the CORS
/// headers, the step's timing and the request's log line.
struct LoginRouteResponder<Context: RequestContext>: HTTPResponder {
    let step: ServerMetrics.LoginStep
    let maxBodyBytes: Int
    let logger: Logger
    let metrics: ServerMetrics?
    let handle: @Sendable (ByteBuffer, Context) async throws -> Response

    func respond(to request: Request, context: Context) async throws -> Response {
        let start = ContinuousClock.now
        var response: Response
        do {
            var request = request
            let body: ByteBuffer
            do { body = try await request.collectBody(upTo: maxBodyBytes) } catch { throw ServerError.bodyTooLarge }
            response = try await handle(body, context)
        } catch {
            // What ErrorResponseMiddleware answers (these handlers throw no OAuthError), with
            // the CORS headers first as OriginalCORSMiddleware puts them.
            response = ServerError(answering: error).jsonResponse()
            response.headers.insert(contentsOf: OriginalCORSMiddleware<Context>.fields, at: response.headers.startIndex)
        }
        let elapsed = ContinuousClock.now - start
        metrics?.recordStep(step, elapsed)
        RequestLogMiddleware<Context>.log(to: logger, method: request.method, route: context.endpointPath,
                                          status: response.status.code, elapsed: elapsed)
        return response
    }
}

/// The fields of a successful login answer in the order the middleware chain gave them: the
/// CORS headers, then the content type.
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
