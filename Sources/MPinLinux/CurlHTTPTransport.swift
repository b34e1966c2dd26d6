// HTTPTransport over libcurl's easy interface: blocking, with hard timeouts and no signals.
// One transport keeps one easy handle between requests so that a login's requests share a
// keep-alive connection; a forked child never touches its parent's handle.

import CCurl
import CCurlShim
import MPinClient
#if canImport(Glibc)
import Glibc
#endif

/// An `HTTPTransport` backed by libcurl.
///
/// * TLS peer and host-name verification are always on; only the trusted CAs can be changed.
/// * Every request has a connect timeout and a total timeout; none waits forever.
/// * `http_proxy`/`https_proxy`/`no_proxy` are honoured (libcurl's default).
/// * Responses larger than `maxResponseBytes` are aborted mid-transfer.
/// * No curl multi interface and no signals (`CURLOPT_NOSIGNAL`); the only thread libcurl may
///   start is its resolver's, for host names that are not IP literals, and that one ends when
///   the system resolver answers.
/// * Redirects are not followed; only `http` and `https` URLs are accepted.
package struct CurlHTTPTransport: HTTPTransport {
    /// The User-Agent sent unless configured otherwise: the project and its version.
    package static let defaultUserAgent = LinuxHTTPConfiguration.defaultUserAgent

    /// How requests are made (shared with the other Linux transports).
    package typealias Configuration = LinuxHTTPConfiguration

    /// libcurl's version line (e.g. `libcurl/7.88.1 OpenSSL/3.0.17 ...`), loading libcurl if it
    /// is not loaded yet; nil when it cannot be loaded.
    package static var libraryVersion: String? { mpin_curl_version().map { String(cString: $0) } }

    /// The configuration every request uses.
    package let configuration: Configuration
    private let idleHandle: IdleHandle?

    /// Creates a transport.
    package init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        idleHandle = configuration.reusesConnection ? IdleHandle() : nil
    }

    /// Performs `request`, blocking until the response is complete or a timeout expires.
    package func send(_ request: HTTPRequest) throws(HTTPTransportError) -> HTTPResponse {
        let origin: URLOrigin
        switch URLOrigin.parse(request.url) {
        case .success(let parsed): origin = parsed
        case .failure(let error): throw .invalidURL(reason: error.reason)
        }
        let headerLines = try Self.headerLines(for: request)

        guard mpin_curl_available() != 0 else {
            throw .other(detail: "libcurl (libcurl.so.4) could not be loaded; install libcurl4")
        }
        guard mpin_curl_global_init_once() == CURLE_OK else {
            throw .other(detail: "libcurl could not be initialised")
        }
        // Everything the handle points at while it works (header list, error buffer, sink) is
        // made before the handle and freed after it is parked (reset) or cleaned up: defers run
        // in reverse order.
        var headerList: UnsafeMutablePointer<curl_slist>?
        defer { mpin_curl_slist_free_all(headerList) }
        for line in headerLines {
            guard let appended = mpin_curl_slist_append(headerList, line) else {
                throw .other(detail: "out of memory building headers")
            }
            headerList = appended
        }

        let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        defer { errorBuffer.deallocate() }
        let sink = ResponseSink(limit: configuration.maxResponseBytes)
        defer { withExtendedLifetime(sink) {} }

        guard let handle = idleHandle?.take() ?? mpin_curl_easy_init() else {
            throw .other(detail: "libcurl could not create a handle")
        }
        var keepHandle = false
        defer {
            if keepHandle, let idleHandle { idleHandle.put(handle) } else { mpin_curl_easy_cleanup(handle) }
        }

        let sinkPointer = Unmanaged.passUnretained(sink).toOpaque()
        let total = request.timeout ?? configuration.timeout
        let totalMilliseconds = HTTPRequestRules.milliseconds(total)
        let connectMilliseconds = min(HTTPRequestRules.milliseconds(configuration.connectTimeout), totalMilliseconds)

        var setup = SetupResult()
        setup.check(mpin_curl_set_string(handle, CURLOPT_URL, request.url))
        setup.check(mpin_curl_set_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"))
        setup.check(mpin_curl_set_string(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"))
        setup.check(mpin_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, 0))
        setup.check(mpin_curl_set_long(handle, CURLOPT_NOSIGNAL, 1))
        setup.check(mpin_curl_set_long(handle, CURLOPT_NOPROGRESS, 1))
        setup.check(mpin_curl_set_long(handle, CURLOPT_SSL_VERIFYPEER, 1))
        setup.check(mpin_curl_set_long(handle, CURLOPT_SSL_VERIFYHOST, 2))
        setup.check(mpin_curl_set_long(handle, CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_2)))
        if let caFile = configuration.caFile {
            setup.check(mpin_curl_set_string(handle, CURLOPT_CAINFO, caFile))
        }
        if let caDirectory = configuration.caDirectory {
            setup.check(mpin_curl_set_string(handle, CURLOPT_CAPATH, caDirectory))
        }
        setup.check(mpin_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, connectMilliseconds))
        setup.check(mpin_curl_set_long(handle, CURLOPT_TIMEOUT_MS, totalMilliseconds))
        setup.check(mpin_curl_set_string(handle, CURLOPT_USERAGENT, configuration.userAgent))
        setup.check(mpin_curl_set_offset(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(configuration.maxResponseBytes)))
        setup.check(mpin_curl_set_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer))
        setup.check(mpin_curl_set_callback(handle, CURLOPT_WRITEFUNCTION, curlReceiveBody))
        setup.check(mpin_curl_set_pointer(handle, CURLOPT_WRITEDATA, sinkPointer))
        setup.check(mpin_curl_set_callback(handle, CURLOPT_HEADERFUNCTION, curlReceiveHeader))
        setup.check(mpin_curl_set_pointer(handle, CURLOPT_HEADERDATA, sinkPointer))
        setup.check(mpin_curl_set_pointer(handle, CURLOPT_HTTPHEADER, headerList))
        setup.check(Self.setMethodAndBody(handle, request))
        if let failed = setup.failure {
            throw .other(detail: "libcurl rejected an option: \(String(cString: mpin_curl_easy_strerror(failed)))")
        }

        let code = mpin_curl_easy_perform(handle)
        if code != CURLE_OK {
            throw Self.error(for: code, handle: handle, origin: origin, request: request, sink: sink,
                             errorBuffer: errorBuffer, connectMilliseconds: connectMilliseconds,
                             totalMilliseconds: totalMilliseconds)
        }
        guard !sink.tooLarge else { throw .responseTooLarge(limit: sink.limit) }
        guard sink.headComplete else {
            throw .connectionFailed(host: origin.display, detail: "the server closed the connection inside the response head")
        }
        var status = 0
        _ = mpin_curl_info_long(handle, CURLINFO_RESPONSE_CODE, &status)
        keepHandle = true
        return HTTPResponse(status: status, headers: sink.headers, body: sink.body)
    }

    // MARK: - Request setup

    /// `Name: value` lines for curl, plus the lines that switch off curl's own defaults that would
    /// change what the core asked for.
    static func headerLines(for request: HTTPRequest) throws(HTTPTransportError) -> [String] {
        var lines: [String] = []
        var seen = Set<String>()
        for (name, value) in try HTTPRequestRules.validatedHeaders(request) {
            // curl drops `Name:` with an empty value; `Name;` is its way to send one.
            lines.append(value.isEmpty ? "\(name);" : "\(name): \(value)")
            seen.insert(name.lowercased())
        }
        // Without this curl waits up to a second for `100 Continue` on larger bodies.
        if !seen.contains("expect") { lines.append("Expect:") }
        // Without this curl labels any body as a form upload.
        if HTTPRequestRules.sendsBody(request), !seen.contains("content-type") { lines.append("Content-Type:") }
        return lines
    }

    private static func setMethodAndBody(_ handle: UnsafeMutableRawPointer, _ request: HTTPRequest) -> CURLcode {
        if HTTPRequestRules.sendsBody(request) {
            let body = request.body ?? []
            var code = mpin_curl_set_offset(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count))
            if code != CURLE_OK { return code }
            // COPYPOSTFIELDS copies the bytes, so the array need not outlive this call.
            code = (body.isEmpty ? [0] : body).withUnsafeBytes { bytes in
                mpin_curl_set_pointer(handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress))
            }
            if code != CURLE_OK { return code }
            if request.method != .post {
                return mpin_curl_set_string(handle, CURLOPT_CUSTOMREQUEST, request.method.rawValue)
            }
            return CURLE_OK
        }
        if request.method == .get { return mpin_curl_set_long(handle, CURLOPT_HTTPGET, 1) }
        return mpin_curl_set_string(handle, CURLOPT_CUSTOMREQUEST, request.method.rawValue)
    }

    // MARK: - Errors

    private static func error(for code: CURLcode, handle: UnsafeMutableRawPointer, origin: URLOrigin,
                              request: HTTPRequest, sink: ResponseSink, errorBuffer: UnsafeMutablePointer<CChar>,
                              connectMilliseconds: Int, totalMilliseconds: Int) -> HTTPTransportError {
        let host = origin.display
        if sink.tooLarge || code == CURLE_FILESIZE_EXCEEDED {
            return .responseTooLarge(limit: sink.limit)
        }
        let detail = safeDetail(code: code, errorBuffer: errorBuffer, url: request.url)
        switch code {
        case CURLE_URL_MALFORMAT:
            return .invalidURL(reason: String(cString: mpin_curl_easy_strerror(code)))
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return .hostNotFound(host: host)
        case CURLE_COULDNT_CONNECT:
            var osErrno = 0
            _ = mpin_curl_info_long(handle, CURLINFO_OS_ERRNO, &osErrno)
            if osErrno == Int(ECONNREFUSED) { return .connectionRefused(host: host) }
            return .connectionFailed(host: host, detail: detail)
        case CURLE_OPERATION_TIMEDOUT:
            var connectSeconds = 0.0
            _ = mpin_curl_info_double(handle, CURLINFO_CONNECT_TIME, &connectSeconds)
            let limit = connectSeconds == 0 ? connectMilliseconds : totalMilliseconds
            return .timedOut(host: host, seconds: Double(limit) / 1000)
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM,
             CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ENGINE_NOTFOUND,
             CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_SHUTDOWN_FAILED,
             CURLE_SSL_CRL_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
             CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CLIENTCERT, CURLE_USE_SSL_FAILED:
            return .tlsFailure(host: host, detail: detail)
        // The scheme was checked before curl saw the URL, so UNSUPPORTED_PROTOCOL here means a
        // reply that is not HTTP/1.x (curl refuses HTTP/0.9).
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE,
             CURLE_WEIRD_SERVER_REPLY, CURLE_HTTP2, CURLE_HTTP2_STREAM, CURLE_HTTP3:
            return .connectionFailed(host: host, detail: detail)
        default:
            return .other(detail: detail)
        }
    }

    /// Whether `needle` occurs in `haystack` (a byte search: `StringProtocol.contains(_:)`
    /// comes from `_StringProcessing`, which the PAM module does not link).
    private static func containsBytes(_ haystack: String.UTF8View, _ needle: Substring.UTF8View) -> Bool {
        let h = Array(haystack), n = Array(needle)
        guard !n.isEmpty, h.count >= n.count else { return n.isEmpty }
        return (0...(h.count - n.count)).contains { h[$0..<($0 + n.count)].elementsEqual(n) }
    }

    /// curl's detailed message when it cannot leak the URL's path or query, else its generic one.
    private static func safeDetail(code: CURLcode, errorBuffer: UnsafeMutablePointer<CChar>, url: String) -> String {
        let generic = String(cString: mpin_curl_easy_strerror(code))
        let specific = String(cString: errorBuffer)
        guard !specific.isEmpty else { return generic }
        guard case .success(let origin) = URLOrigin.parse(url), !origin.hasUserInfo else { return generic }
        for part in [Substring(origin.target), origin.path] where part.utf8.count > 1 && containsBytes(specific.utf8, part.utf8) {
            return generic
        }
        return specific
    }
}

/// Collects the first failing `curl_easy_setopt` result.
private struct SetupResult {
    var failure: CURLcode?
    mutating func check(_ code: CURLcode) {
        if failure == nil, code != CURLE_OK { failure = code }
    }
}
