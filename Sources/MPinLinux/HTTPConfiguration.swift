// What the Linux HTTP transports share: their configuration and the checks every request passes
// before a byte is sent.

import MPinClient

/// How the Linux transports (`LinuxHTTPTransport`, `PlainHTTPTransport`, `CurlHTTPTransport`)
/// make requests.
package struct LinuxHTTPConfiguration: Sendable, Equatable {
    /// The User-Agent sent unless configured otherwise: the project and its version.
    package static let defaultUserAgent = "mpin-pam/0.1"

    /// A PEM file of trusted CA certificates, instead of the system's bundle (TLS only).
    package var caFile: String?
    /// A directory of hashed CA certificates (`c_rehash`), instead of the system's (TLS only).
    package var caDirectory: String?
    /// Time allowed to establish the connection (TCP and TLS).
    package var connectTimeout: Duration
    /// Time allowed for a whole request, unless the request sets its own `timeout`.
    package var timeout: Duration
    /// Largest response accepted, headers and body together (PlainHTTPTransport counts the
    /// bytes as received, chunk framing included; libcurl the header lines and decoded body).
    package var maxResponseBytes: Int
    /// The User-Agent header.
    package var userAgent: String
    /// Whether consecutive requests reuse one keep-alive connection (one TCP and TLS handshake
    /// per login instead of one per request).
    package var reusesConnection: Bool

    /// Creates a configuration; the defaults suit a login: 10 s to connect, 30 s in all, 1 MiB.
    package init(caFile: String? = nil, caDirectory: String? = nil,
                connectTimeout: Duration = .seconds(10), timeout: Duration = .seconds(30),
                maxResponseBytes: Int = 1 << 20, userAgent: String = LinuxHTTPConfiguration.defaultUserAgent,
                reusesConnection: Bool = true) {
        self.caFile = caFile
        self.caDirectory = caDirectory
        self.connectTimeout = connectTimeout
        self.timeout = timeout
        self.maxResponseBytes = maxResponseBytes
        self.userAgent = userAgent
        self.reusesConnection = reusesConnection
    }
}

/// Request checks and conversions both transports use.
enum HTTPRequestRules {
    /// Headers the transports set themselves: a caller's copy could contradict the framing
    /// (request smuggling on a kept connection) or the host the URL names.
    static let managedHeaders: Set<String> = ["host", "content-length", "transfer-encoding", "connection"]

    /// The request's headers sorted by name, after checking that each can be sent as one line
    /// (a token name, a value without CR, LF or NUL) and is not one the transport manages.
    static func validatedHeaders(_ request: HTTPRequest) throws(HTTPTransportError) -> [(name: String, value: String)] {
        var result: [(name: String, value: String)] = []
        for (name, value) in request.headers.sorted(by: { $0.key < $1.key }) {
            if managedHeaders.contains(name.lowercased()) {
                throw .invalidRequest(reason: "the transport sets the \(name.lowercased()) header itself")
            }
            guard !name.isEmpty, name.utf8.allSatisfy(isTokenByte) else {
                throw .invalidRequest(reason: "a header name is empty or has characters not allowed in names")
            }
            guard value.utf8.allSatisfy({ $0 != 13 && $0 != 10 && $0 != 0 }) else {
                throw .invalidRequest(reason: "the value of header \(name) contains CR, LF or NUL")
            }
            result.append((name, value))
        }
        return result
    }

    /// Whether the method carries a body even when the request has none (`Content-Length: 0`).
    static func sendsBody(_ request: HTTPRequest) -> Bool {
        request.body != nil || [.post, .put, .patch].contains(request.method)
    }

    /// RFC 9110 `tchar`.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
             UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
             UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// A duration in whole milliseconds, at least 1, capped so that it fits a C `long` timeout.
    static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 1 }
        let capped = min(seconds, Int64(Int32.max / 1000))
        return max(1, Int(capped) * 1000 + Int(attoseconds / 1_000_000_000_000_000))
    }
}
