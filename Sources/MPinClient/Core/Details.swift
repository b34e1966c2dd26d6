import MPinJSON

/// Service and session details (PROTOCOL.md §5.5).
extension MPinSDK {
    /// `GetServiceDetails(url)`: `GET {url}/service`; the service must be of type "online".
    public func serviceDetails(url: String) -> (status: MPinStatus, details: MPinServiceDetails) {
        var d = MPinServiceDetails()
        switch request(.get, Self.trimmedBackend(url) + "/service") {
        case .failed(let s, _): return (s, d)
        case .ok(let v, _):
            guard v["type"]?.stringValue == "online" else {
                return (MPinStatus(.responseParseError, "the service is not of type \"online\""), d)
            }
            d.name = v["name"]?.stringValue ?? ""
            d.backendURL = v["url"]?.stringValue ?? ""
            d.rpsPrefix = v["rps_prefix"]?.stringValue ?? ""
            d.logoURL = v["logo_url"]?.stringValue ?? ""
            return (.ok, d)
        }
    }

    /// `GetSessionDetails(accessCode)`: `POST codeStatusURL {"status": "wid", "wid": code}`.
    /// Reads the SDK's spelling `prerollId`, `appName`, `appLogoURL`.
    public func sessionDetails(accessCode: String) -> (status: MPinStatus, details: MPinSessionDetails) {
        var d = MPinSessionDetails()
        guard let settings else { return (MPinStatus(.flowError, "no backend is set"), d) }
        let url = settings.string("codeStatusURL")
        guard !url.isEmpty else { return (MPinStatus(.flowError, "the backend has no codeStatusURL"), d) }
        switch request(.post, url, json: .object([("status", .string("wid")), ("wid", .string(accessCode))])) {
        case .failed(let s, _): return (s, d)
        case .ok(let v, _):
            d.prerollId = v["prerollId"]?.stringValue ?? ""
            d.appName = v["appName"]?.stringValue ?? ""
            d.appIconURL = v["appLogoURL"]?.stringValue ?? ""
            return (.ok, d)
        }
    }
}
