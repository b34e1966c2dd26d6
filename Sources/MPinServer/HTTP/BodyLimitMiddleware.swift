import Hummingbird

/// Reads the whole body before routing, refusing one larger than `maxBytes` with 413 (for
/// every path, as before routing), so that handlers see a body already in memory.
struct BodyLimitMiddleware<Context: RequestContext>: RouterMiddleware {
    let maxBytes: Int

    func handle(_ request: Request, context: Context,
                next: (Request, Context) async throws -> Response) async throws -> Response {
        var request = request
        do { _ = try await request.collectBody(upTo: maxBytes) } catch { throw ServerError.bodyTooLarge }
        return try await next(request, context)
    }
}
