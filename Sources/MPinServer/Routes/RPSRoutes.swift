import Hummingbird
import MPinWire

extension RPS {
    /// The RPS's public API under `/{rpsPrefix}` (PROTOCOL.md §3–§5): registration, time
    /// permits and access numbers; the two passes are `LoginRoutes`.
    func publicRoutes<Context: RequestContext>(decoder: WireBodyDecoder) -> RouteCollection<Context> {
        let routes = RouteCollection(context: Context.self)
        routes.endpoint("clientSettings", .get) { _, _ in JSONResponse(try self.clientSettings()) }
        routes.endpoint("user", .put) { request, context in
            JSONResponse(try await self.register(try await decoder.decode(RegisterRequest.self, from: request),
                                                 mpinIDSuffix: nil, source: context.clientAddress))
        }
        routes.endpoint("user/:mpinID", .put) { request, context in
            JSONResponse(try await self.register(try await decoder.decode(RegisterRequest.self, from: request),
                                                 mpinIDSuffix: context.pathParameter("mpinID"), source: context.clientAddress))
        }
        routes.endpoint("signature/:mpinID", .get) { request, context in
            JSONResponse(try await self.signature(mpinIDHex: context.pathParameter("mpinID"),
                                                  regOTT: QueryParameters(request.uri.query)?["regOTT"]))
        }
        routes.endpoint("timePermit/:mpinID", .get) { request, context in
            JSONResponse(try await self.timePermit(mpinIDHex: context.pathParameter("mpinID"),
                                                   verdictNonce: QueryParameters(request.uri.query)?[Verdict.nonceParameter]),
                         headers: [.cacheControl: "no-cache"])
        }
        routes.endpoint("setupDone/:mpinID", .post) { _, _ in JSONResponse(StatusResponse(message: "OK")) }
        routes.endpoint("authenticate", .post) { request, _ in
            switch try await self.mobileAuthenticate(try await decoder.decode(AuthenticateRequest.self, from: request)) {
            case .loggedIn(let body): return JSONResponse(body).response()
            case .authorized(let body): return JSONResponse(body, headers: [.cacheControl: "no-store"]).response()
            }
        }
        routes.endpoint("regCode", .post) { request, _ in
            JSONResponse(try await self.issueRegCode(try await decoder.decode(AuthenticateRequest.self, from: request)),
                         headers: [.cacheControl: "no-store"])
        }
        routes.endpoint("dvsRegToken", .post) { request, _ in
            JSONResponse(try await self.issueDVSToken(try await decoder.decode(AuthenticateRequest.self, from: request)),
                         headers: [.cacheControl: "no-store"])
        }
        routes.endpoint("dvsregister", .post) { request, _ in
            JSONResponse(try await self.registerSigningKey(try await decoder.decode(DVSRegisterRequest.self, from: request)),
                         headers: [.cacheControl: "no-store"])
        }
        routes.endpoint("dvsVerify", .post) { request, _ in
            JSONResponse(try await self.verifySignature(try await decoder.decode(DVSSignatureMessage.self, from: request)),
                         headers: [.cacheControl: "no-store"])
        }
        routes.endpoint("getAccessNumber", .post) { request, context in
            // The body is optional (a browser sends none); a device login's requester describes itself.
            let req = try await decoder.decodeIfPresent(AccessNumberRequest.self, from: request)
            return JSONResponse(try await self.getAccessNumber(req, client: context.clientAddress))
        }
        routes.endpoint("accessnumber/:accessNumber", .get) { _, context in
            JSONResponse(try await self.accessNumberDetails(context.pathParameter("accessNumber"), client: context.clientAddress),
                         headers: [.cacheControl: "no-store"])
        }
        routes.endpoint("accessnumber", .post) { request, _ in
            JSONResponse(try await self.pollAccessNumber(try await decoder.decode(AccessNumberPollRequest.self, from: request)))
        }
        return routes
    }

    /// The RPS's endpoints at the root: its status, the RPA's private calls (token
    /// verification, activation) and the activation link of `link` mode.
    func rootRoutes<Context: RequestContext>(decoder: WireBodyDecoder) -> RouteCollection<Context> {
        let routes = RouteCollection(context: Context.self)
        routes.endpoint("status", .get) { _, _ in JSONResponse(StatusResponse(message: "active")) }
        routes.endpoint("authenticate", .post) { request, _ in
            try await self.tokenAuthenticate(try await decoder.decode(TokenAuthenticateRequest.self, from: request))
        }
        routes.endpoint("user/:mpinID", .post) { request, context in
            try await self.activate(mpinIDHex: context.pathParameter("mpinID"),
                                    try await decoder.decode(ActivateRequest.self, from: request))
            return JSONResponse(StatusResponse(message: "OK"))
        }
        // A GET only shows what the link would activate (ActivationPage says why); the page's
        // button, or a client that means it, POSTs.
        routes.endpoint("mpinActivate", .get, .post) { request, _ -> Response in
            let query = request.uri.query ?? ""
            guard request.method == .post else {
                return ActivationPage(query: query, mpinIDHex: QueryParameters(query)?["i"]).response()
            }
            let fields = QueryParameters(query)
            try await self.activateLink(mpinIDHex: fields?["i"], activateKey: fields?["s"])
            if request.headers[.accept]?.contains("text/html") == true { return ActivationPage.activated() }
            return JSONResponse(StatusResponse(message: "Identity activated")).response()
        }
        return routes
    }

    /// The demo RPA's endpoints the client calls (§4.5, §5.6): logout; its final
    /// authentication step is `LoginRoutes`.
    func demoRPARoutes<Context: RequestContext>(decoder: WireBodyDecoder) -> RouteCollection<Context> {
        let routes = RouteCollection(context: Context.self)
        routes.endpoint("logout", .post) { request, _ in
            try await self.logout(try await decoder.decode(LogoutData.self, from: request))
            return Response(status: .ok)
        }
        return routes
    }
}
