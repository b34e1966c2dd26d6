import Hummingbird

/// The methods a declared path answers 405 to when it does not serve them (OPTIONS is the
/// CORS middleware's). A method outside this list on a declared path finds no route: 404.
private let declinedMethods: [HTTPRequest.Method] = [.get, .head, .post, .put, .delete, .patch, .trace, .connect]

extension RouterMethods {
    /// Declares the endpoint at `path` for `methods`; the other common methods get 405, as
    /// the original servers answer a known path called with the wrong method.
    @discardableResult
    func endpoint(_ path: RouterPath, _ methods: HTTPRequest.Method...,
                  use handler: @Sendable @escaping (Request, Context) async throws -> some ResponseGenerator) -> Self {
        for method in methods { on(path, method: method, use: handler) }
        for method in declinedMethods where !methods.contains(method) {
            on(path, method: method) { _, _ -> Response in throw ServerError.methodNotAllowed }
        }
        return self
    }
}

extension RequestContext {
    /// A path parameter declared as `:name` in the route; empty only if the route lacks it.
    func pathParameter(_ name: String) -> String { parameters.get(name) ?? "" }
}
