// Splits what an error message may show (scheme, host, port) off an absolute URL, and rejects
// URLs the transport must not hand to libcurl.

/// The `scheme://host[:port]` part of an absolute http(s) URL.
struct URLOrigin: Equatable {
    var scheme: String
    var host: String
    var port: Int?
    /// Whether the URL names a user (`user[:password]@host`).
    var hasUserInfo = false

    /// `scheme://host[:port]`, safe for messages: no user info, path or query.
    var display: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        if let port { return "\(scheme)://\(shownHost):\(port)" }
        return "\(scheme)://\(shownHost)"
    }

    /// Parses `url`; the reason on failure never quotes the URL (it can hold a regOTT).
    static func parse(_ url: String) -> Result<URLOrigin, HTTPTransportErrorReason> {
        for scalar in url.unicodeScalars where scalar.value <= 0x20 || scalar.value == 0x7f {
            return .failure(.init("URL contains whitespace or control characters"))
        }
        guard let separator = url.firstRange(of: "://") else {
            return .failure(.init("URL is not absolute"))
        }
        let scheme = url[..<separator.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else {
            return .failure(.init("only http and https URLs are allowed"))
        }
        let rest = url[separator.upperBound...]
        let authorityEnd = rest.firstIndex(where: isPathStart) ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        let userInfo = authority.lastIndex(of: "@")
        if let at = userInfo {
            authority = authority[authority.index(after: at)...]
        }
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else {
                return .failure(.init("URL has an unterminated IPv6 address"))
            }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return .failure(.init("URL has a malformed host")) }
                portText = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty else { return .failure(.init("URL has no host")) }
        var port: Int?
        if let portText {
            guard let value = Int(portText), (1...65535).contains(value) else {
                return .failure(.init("URL has an invalid port"))
            }
            port = value
        }
        return .success(URLOrigin(scheme: scheme, host: host.lowercased(), port: port, hasUserInfo: userInfo != nil))
    }
}

/// A reason string wrapped so it can travel in a `Result`.
struct HTTPTransportErrorReason: Error {
    let text: String
    init(_ text: String) { self.text = text }
}

/// True for the characters that end a URL's authority.
func isPathStart(_ character: Character) -> Bool {
    character == "/" || character == "?" || character == "#"
}
