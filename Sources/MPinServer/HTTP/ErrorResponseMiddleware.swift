import Hummingbird

/// Turns every error below it into the JSON error response of `ServerError` (the router's
/// "no such path" included), so that nothing a client sends ends in a bare status or a crash.
struct ErrorResponseMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context,
                next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let e as OAuthError {
            return e.jsonResponse()
        } catch {
            return ServerError(answering: error).response(from: request, context: context)
        }
    }
}
