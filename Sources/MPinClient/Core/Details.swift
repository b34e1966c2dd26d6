internal import MPinJSON
internal import MPinWire

/// Service and session details (docs/PROTOCOL.md §5.5).
extension MPinSDK {
    /// `GetServiceDetails(url)`: `GET {url}/service`; the service must be of type "online".
    public func serviceDetails(url: String) -> (status: MPinStatus, details: MPinServiceDetails) {
        var d = MPinServiceDetails()
        switch request(.get, Self.trimmedBackend(url) + "/service") {
        case .failed(let s, _): return (s, d)
        case .ok(let v, _):
            guard let service = WireCoding.lenient(ServiceDetailsResponse.self, from: v), service.type == "online" else {
                return (MPinStatus(.responseParseError, "the service is not of type \"online\""), d)
            }
            d.name = service.name
            d.backendURL = service.url
            d.rpsPrefix = service.rps_prefix
            d.logoURL = service.logo_url
            return (.ok, d)
        }
    }

    /// `GetSessionDetails(accessCode)`: `POST codeStatusURL {"status": "wid", "wid": code}`.
    /// Reads the SDK's spelling `prerollId`, `appName`, `appLogoURL`.
    public func sessionDetails(accessCode: String) -> (status: MPinStatus, details: MPinSessionDetails) {
        sessionDetails(accessCode: accessCode, context: .generic)
    }

    /// GetSessionDetails; the MFA flavour reads a 404 as a dead access code (`.codeStatus`).
    /// The customer members are filled when the server sends them (docs/MFA.md §4).
    func sessionDetails(accessCode: String, context: RequestContext) -> (status: MPinStatus, details: MPinSessionDetails) {
        var d = MPinSessionDetails()
        let url: String
        switch codeStatusURL() {
        case .failure(let refusal): return (refusal, d)
        case .success(let u): url = u
        }
        switch request(.post, url, body: CodeStatusRequest.sessionDetails(accessCode: accessCode), context: context) {
        case .failed(let s, _): return (s, d)
        case .ok(let v, _):
            let session = WireCoding.lenient(SessionDetailsResponse.self, from: v)
            d.prerollId = session?.prerollId ?? ""
            d.appName = session?.appName ?? ""
            d.appIconURL = session?.appLogoURL ?? ""
            d.customerId = session?.customerId ?? ""
            d.customerName = session?.customerName ?? ""
            d.customerIconURL = session?.customerLogoURL ?? ""
            d.loginDescription = AccessNumberDescription.sanitized(session?.loginDescription ?? "")
            return (.ok, d)
        }
    }

    /// The backend's `codeStatusURL`; FLOW_ERROR without a backend or without the URL
    /// (docs/MFA.md §3.1).
    func codeStatusURL() -> Result<String, MPinStatus> {
        guard let settings else { return .failure(MPinStatus(.flowError, "no backend is set")) }
        let url = settings.wire.codeStatusURL ?? ""
        guard !url.isEmpty else { return .failure(MPinStatus(.flowError, "the backend has no codeStatusURL")) }
        return .success(url)
    }
}
