import Hummingbird
import MPinWire

extension OIDCProvider {
    /// The OpenID provider's endpoints and the service details, at the root (docs/MFA.md §3, §5, §7).
    func rootRoutes<Context: RequestContext>(decoder: WireBodyDecoder) -> RouteCollection<Context> {
        let routes = RouteCollection(context: Context.self)
        routes.endpoint("service", .get) { request, _ in JSONResponse(try self.serviceDetails(request)) }
        routes.endpoint("authorize", .get, .post) { request, context in
            // A browser's form POST carries the parameters in its body; the SDK's POST (JSON,
            // body ignored) carries them in the query.
            var form: String? = nil
            if request.method == .post,
               request.headers[.contentType]?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true {
                var request = request
                form = String(buffer: try await request.collectBody(upTo: decoder.maxBodyBytes))
            }
            return try await self.authorize(request, client: context.clientAddress, form: form)
        }
        routes.endpoint("authorize/status", .post) { request, _ in
            let poll: SessionPollRequest
            do { poll = try await decoder.decode(SessionPollRequest.self, from: request) } catch {
                throw OAuthError.invalidRequest("malformed JSON body")
            }
            return JSONResponse(try await self.sessionStatus(poll), headers: [.cacheControl: "no-store"])
        }
        routes.endpoint("oidc/token", .post) { request, _ in
            var request = request
            let body = try await request.collectBody(upTo: decoder.maxBodyBytes)
            let response = try await self.token(request, body: String(buffer: body))
            return JSONResponse(response, headers: [.cacheControl: "no-store", .pragma: "no-cache"])
        }
        routes.endpoint("oidc/userinfo", .get, .post) { request, _ in
            JSONResponse(try await self.userinfo(request), headers: [.cacheControl: "no-store", .pragma: "no-cache"])
        }
        routes.endpoint(".well-known/openid-configuration", .get) { request, _ in JSONResponse(try self.discovery(request)) }
        routes.endpoint("oidc/jwks", .get) { _, _ in JSONResponse(self.jwks) }
        return routes
    }

    /// `codeStatus` under the RPS prefix (docs/MFA.md §4).
    func prefixRoutes<Context: RequestContext>(decoder: WireBodyDecoder) -> RouteCollection<Context> {
        let routes = RouteCollection(context: Context.self)
        routes.endpoint("codeStatus", .post) { request, context in
            switch try await self.codeStatus(try await decoder.decode(CodeStatusRequest.self, from: request),
                                             client: context.clientAddress) {
            case .details(let d): return JSONResponse(d).response()
            case .acknowledged: return JSONResponse(EmptyObject()).response()
            }
        }
        return routes
    }
}
