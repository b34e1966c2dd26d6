// The one place absolute URLs are taken apart (the core's trust checks and messages, both
// transports, the login's time budget): scheme, host and port for messages and connections,
// the request target for the wire, and nothing of the URL ever quoted in an error.

/// An absolute `http` or `https` URL split into what the project needs.
package struct URLOrigin: Equatable, Sendable {
    /// `http` or `https`, lower-cased.
    package var scheme: String
    /// The host, lower-cased; an IPv6 address without its brackets.
    package var host: String
    /// The port, when the URL names one.
    package var port: Int?
    /// Whether the URL names a user (`user[:password]@host`).
    package var hasUserInfo = false
    /// The path and query as sent in a request line (`/` when the URL has neither), without
    /// the fragment.
    package var target = "/"

    /// `host[:port]`, an IPv6 host in brackets: the request's Host header.
    package var authority: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return port.map { "\(shownHost):\($0)" } ?? shownHost
    }

    /// `scheme://host[:port]`, safe for messages and logs: no user info, path or query.
    package var display: String { scheme + "://" + authority }

    /// Whether the host is this machine by name or by its usual loopback address (`localhost`,
    /// `127.0.0.1`, `::1`), compared whole: `localhost.example.org` is not.
    package var isLoopback: Bool { host == "localhost" || host == "127.0.0.1" || host == "::1" }

    /// The port a connection uses: the URL's, else the scheme's default.
    package var effectivePort: Int { port ?? (scheme == "https" ? 443 : 80) }

    /// Whether both URLs reach the same server: scheme, host and port (RFC 6454's origin).
    package func sameOrigin(as other: URLOrigin) -> Bool {
        scheme == other.scheme && host == other.host && effectivePort == other.effectivePort
    }

    /// The target's path, without the query (which can hold a regOTT or a signature).
    package var path: Substring { target.prefix { $0 != "?" } }

    /// Why a URL was refused; the text never quotes the URL (it can hold a regOTT).
    package struct ParseError: Error, Equatable, Sendable {
        package let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// Parses `url`, refusing anything that is not an absolute http(s) URL with a host:
    /// whitespace or control characters, other schemes, a malformed IPv6 literal or port.
    package static func parse(_ url: String) -> Result<URLOrigin, ParseError> {
        // Byte offsets, not String algorithms: this runs for every request of a PAM login.
        let bytes = Array(url.utf8)
        guard bytes.allSatisfy({ $0 > 0x20 && $0 != 0x7f }) else {
            return .failure(.init("URL contains whitespace or control characters"))
        }
        guard let separator = firstOffset(of: Array("://".utf8), in: bytes) else {
            return .failure(.init("URL is not absolute"))
        }
        let scheme = String(decoding: bytes[..<separator], as: UTF8.self).lowercased()
        guard scheme == "http" || scheme == "https" else {
            return .failure(.init("only http and https URLs are allowed"))
        }
        let rest = bytes[(separator + 3)...]
        let authorityEnd = rest.firstIndex(where: isPathStart) ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        let userInfo = authority.lastIndex(of: UInt8(ascii: "@"))
        if let at = userInfo { authority = authority[(at + 1)...] }

        var host: ArraySlice<UInt8>
        var portText: ArraySlice<UInt8>?
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else {
                return .failure(.init("URL has an unterminated IPv6 address"))
            }
            host = authority[(authority.startIndex + 1)..<close]
            let after = authority[(close + 1)...]
            if !after.isEmpty {
                guard after.first == UInt8(ascii: ":") else { return .failure(.init("URL has a malformed host")) }
                portText = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: UInt8(ascii: ":")) {
            host = authority[..<colon]
            portText = authority[(colon + 1)...]
        } else {
            host = authority
        }
        guard !host.isEmpty else { return .failure(.init("URL has no host")) }
        var port: Int?
        if let portText {
            guard !portText.isEmpty, portText.count <= 5,
                  portText.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
                return .failure(.init("URL has an invalid port"))
            }
            let value = portText.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
            guard (1...65535).contains(value) else { return .failure(.init("URL has an invalid port")) }
            port = value
        }

        var target = rest[authorityEnd...]
        if let hash = target.firstIndex(of: UInt8(ascii: "#")) { target = target[..<hash] }
        var targetText = String(decoding: target, as: UTF8.self)
        if targetText.isEmpty {
            targetText = "/"
        } else if targetText.utf8.first != UInt8(ascii: "/") {
            targetText = "/" + targetText
        }
        return .success(URLOrigin(scheme: scheme, host: String(decoding: host, as: UTF8.self).lowercased(), port: port,
                                  hasUserInfo: userInfo != nil, target: targetText))
    }

    private static func isPathStart(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#")
    }

    private static func firstOffset(of needle: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        for offset in 0...(bytes.count - needle.count) where bytes[offset..<(offset + needle.count)].elementsEqual(needle) {
            return offset
        }
        return nil
    }
}
