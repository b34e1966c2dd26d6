// HTTP values the client core hands to the platform, the counterpart of the SDK's IHttpRequest.
// The core builds an `HTTPRequest`, a platform `HTTPTransport` performs it and returns an
// `HTTPResponse` or a typed `HTTPTransportError`.

/// The request methods the client core uses (the SDK's `IHttpRequest::Method`).
public enum HTTPMethod: String, Sendable, CaseIterable {
    /// HTTP GET.
    case get = "GET"
    /// HTTP POST.
    case post = "POST"
    /// HTTP PUT.
    case put = "PUT"
    /// HTTP DELETE.
    case delete = "DELETE"
    /// HTTP OPTIONS.
    case options = "OPTIONS"
    /// HTTP PATCH.
    case patch = "PATCH"
}

/// One HTTP request: an absolute `http`/`https` URL (query already encoded into it), headers, an
/// optional body and an optional total timeout.
///
/// A request carries secrets (regOTT in a query, tokens never, but PIN-derived values in bodies),
/// so transports never put the URL's path or query, the headers or the body into errors or logs.
public struct HTTPRequest: Sendable, Equatable {
    /// The method.
    public var method: HTTPMethod
    /// The absolute URL, e.g. `https://mfa.example.com/rps/clientSettings`.
    public var url: String
    /// Request headers. Names are sent as given; a name that differs only in case from another
    /// one is a separate header, so callers should keep one spelling per name.
    public var headers: [String: String]
    /// The body, or `nil` for none. An empty body on POST/PUT/PATCH is sent as `Content-Length: 0`.
    public var body: [UInt8]?
    /// Total time allowed for the whole exchange (connect, send, receive). `nil` means the
    /// transport's default; transports never wait forever.
    public var timeout: Duration?

    /// Creates a request.
    public init(method: HTTPMethod, url: String, headers: [String: String] = [:],
                body: [UInt8]? = nil, timeout: Duration? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }

    /// Creates a request whose body is the UTF-8 encoding of `text`.
    public init(method: HTTPMethod, url: String, headers: [String: String] = [:],
                text: String, timeout: Duration? = nil) {
        self.init(method: method, url: url, headers: headers, body: Array(text.utf8), timeout: timeout)
    }
}

/// A received HTTP response. Any status code is a response, not an error: mapping 4xx/5xx to
/// statuses is the core's job (the SDK's "non-2xx does not mean Execute failed").
public struct HTTPResponse: Sendable, Equatable {
    /// The status code of the final response (after any `100 Continue`).
    public var status: Int
    /// Response headers with lower-cased names; repeated headers are joined with `", "`.
    public var headers: [String: String]
    /// The raw body.
    public var body: [UInt8]

    /// Creates a response.
    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        var lowered: [String: String] = [:]
        for (name, value) in headers {
            let key = name.lowercased()
            if let existing = lowered[key] { lowered[key] = existing + ", " + value } else { lowered[key] = value }
        }
        self.headers = lowered
        self.body = body
    }

    /// The value of header `name`, compared case-insensitively.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// The body decoded as UTF-8 (invalid sequences replaced), e.g. for JSON parsing.
    public var text: String { String(decoding: body, as: UTF8.self) }
}

/// Why a request produced no response. Messages name at most the scheme, host and port, never
/// the path, query, headers or body (they can hold a regOTT or other secrets).
public enum HTTPTransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The URL is not an absolute `http`/`https` URL the transport accepts.
    case invalidURL(reason: String)
    /// A header name or value cannot be sent (e.g. contains CR or LF).
    case invalidRequest(reason: String)
    /// The host is not in the trusted domains (the SDK's UNTRUSTED_DOMAIN_ERROR).
    case untrustedDomain(host: String)
    /// The host name (or the proxy's) could not be resolved.
    case hostNotFound(host: String)
    /// The server actively refused the connection (nothing listens on that port).
    case connectionRefused(host: String)
    /// The connection could not be made, or broke during the exchange.
    case connectionFailed(host: String, detail: String)
    /// No complete response within the limit (`seconds`), connecting or in total.
    case timedOut(host: String, seconds: Double)
    /// TLS failed: certificate not trusted, name mismatch, handshake error, bad CA file.
    case tlsFailure(host: String, detail: String)
    /// The response (headers and body) exceeded `limit` bytes; the transfer was aborted.
    case responseTooLarge(limit: Int)
    /// Anything else the transport library reported.
    case other(detail: String)

    /// The error for a person, naming the host concerned.
    public var description: String {
        switch self {
        case .invalidURL(let reason): return "invalid URL: \(reason)"
        case .invalidRequest(let reason): return "invalid request: \(reason)"
        case .untrustedDomain(let host): return "untrusted domain: \(host)"
        case .hostNotFound(let host): return "could not resolve host \(host)"
        case .connectionRefused(let host): return "connection refused by \(host)"
        case .connectionFailed(let host, let detail): return "connection to \(host) failed: \(detail)"
        case .timedOut(let host, let seconds): return "request to \(host) timed out after \(seconds) s"
        case .tlsFailure(let host, let detail): return "TLS failure with \(host): \(detail)"
        case .responseTooLarge(let limit): return "response larger than \(limit) bytes"
        case .other(let detail): return "HTTP transport error: \(detail)"
        }
    }
}

/// Performs HTTP requests; the counterpart of the SDK's `IHttpRequest::Execute`.
///
/// `send` blocks the calling thread until a response arrives or a hard timeout expires, because
/// PAM calls are synchronous and a PAM module must not leave threads behind. Implementations
/// must be safe to call from several threads at once (each call is independent).
public protocol HTTPTransport: Sendable {
    /// Performs `request` and returns the response, whatever its status code.
    func send(_ request: HTTPRequest) throws(HTTPTransportError) -> HTTPResponse
}
