// The transport the Linux platform uses: HTTP or HTTPS to an IP address goes over a socket of
// our own (TLS by OpenSSL's libssl, loaded at the first https request), everything else (host
// names, proxies) through libcurl, loaded only when needed.

import MPinClient

/// Sends each request with `PlainHTTPTransport` when it can (an `http` or `https` URL with an
/// IP-address host and no proxy), else with `CurlHTTPTransport`. Both share one configuration
/// (the CA settings included) and report the same errors for the same failures;
/// PlainHTTPTransport is the stricter parser, counts the size limit on the bytes as received,
/// and never resends a POST. A PAM login against a backend at an IP address then never loads
/// libcurl (for https it loads libssl and libcrypto only).
package struct LinuxHTTPTransport: HTTPTransport {
    /// The configuration both transports use.
    package let configuration: LinuxHTTPConfiguration
    private let plain: PlainHTTPTransport
    private let curl: CurlHTTPTransport

    /// Creates a transport.
    package init(configuration: LinuxHTTPConfiguration = LinuxHTTPConfiguration()) {
        self.configuration = configuration
        plain = PlainHTTPTransport(configuration: configuration)
        curl = CurlHTTPTransport(configuration: configuration)
    }

    /// Performs `request` with the transport that suits its URL.
    package func send(_ request: HTTPRequest) throws(HTTPTransportError) -> HTTPResponse {
        if let destination = PlainHTTPTransport.destination(of: request.url) {
            return try plain.send(request, to: destination)
        }
        return try curl.send(request)
    }
}
