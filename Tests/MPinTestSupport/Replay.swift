#if canImport(Glibc)
import Glibc
#endif
import MPinClient
import MPinJSON
import Synchronization

/// One recorded exchange of ../shared/fixtures/recorded-http.json (the original SDK's test
/// traffic).
package struct Exchange: Sendable {
    package let context: String
    package let method: String
    package let url: String
    package let requestBody: String
    package let status: Int
    package let responseBody: String
}

/// The recorded traffic of the original SDK (`fixtures/recorded-http.json` of the reference
/// data, which the tests locate with MPinReferenceData).
package enum Fixtures {
    /// The recorded exchanges in `recordedHTTP` (the file's bytes), in the order they happened.
    package static func recording(_ recordedHTTP: some Collection<UInt8>) throws -> [Exchange] {
        let json = try JSONParser().parse(recordedHTTP)
        guard case .array(let items) = json else { throw JSONError.syntax(offset: 0, reason: "not an array") }
        return items.map { item in
            Exchange(context: item["request"]?["context"]?.stringValue ?? "",
                     method: item["request"]?["method"]?.stringValue ?? "",
                     url: item["request"]?["url"]?.stringValue ?? "",
                     requestBody: item["request"]?["data"]?.stringValue ?? "",
                     status: Int(item["response"]?["httpStatus"]?.int64Value ?? 0),
                     responseBody: item["response"]?["data"]?.stringValue ?? "")
        }
    }
}

/// Serves recorded exchanges in order and checks that every request matches the next one in
/// method and URL (and its JSON body in shape). Status 0 in the recording means the
/// connection failed.
package final class ReplayTransport: HTTPTransport, Sendable {
    private struct State {
        var queue: [Exchange]
        var mismatches: [String] = []
        var sent: [HTTPRequest] = []
    }
    private let state: Mutex<State>

    package init(_ exchanges: [Exchange]) { state = Mutex(State(queue: exchanges)) }

    /// Recorded exchanges not requested yet.
    package var remaining: [Exchange] { state.withLock { $0.queue } }
    /// Requests that differed from the recording.
    package var mismatches: [String] { state.withLock { $0.mismatches } }
    /// Every request received.
    package var sent: [HTTPRequest] { state.withLock { $0.sent } }

    package func send(_ request: HTTPRequest) throws(HTTPTransportError) -> HTTPResponse {
        let next: Exchange? = state.withLock { s in
            s.sent.append(request)
            return s.queue.isEmpty ? nil : s.queue.removeFirst()
        }
        guard let next else {
            state.withLock { $0.mismatches.append("unexpected \(request.method.rawValue) \(request.url)") }
            throw .connectionRefused(host: "replay")
        }
        guard next.method == request.method.rawValue, next.url == request.url else {
            state.withLock {
                $0.mismatches.append("expected \(next.method) \(next.url), got \(request.method.rawValue) \(request.url)")
            }
            throw .connectionRefused(host: "replay")
        }
        if next.status == 0 { throw .hostNotFound(host: "recorded failure") }
        if let problem = Self.bodyDifference(recorded: next.requestBody, sent: request.body ?? []) {
            state.withLock { $0.mismatches.append("\(next.method) \(next.url): \(problem)") }
        }
        return HTTPResponse(status: next.status, body: Array(next.responseBody.utf8))
    }

    /// The recorded and the sent body must both be empty, or JSON objects with the same keys
    /// (recursively) and values of the same types.
    package static func bodyDifference(recorded: String, sent: [UInt8]) -> String? {
        if recorded.isEmpty { return sent.isEmpty ? nil : "a body was sent where the recording has none" }
        guard let a = try? JSONParser().parse(recorded) else { return nil } // not JSON: nothing to compare
        guard let b = try? JSONParser().parse(sent) else { return "the body sent is not JSON" }
        return shapeDifference(a, b, path: "")
    }

    static func shapeDifference(_ a: JSONValue, _ b: JSONValue, path: String) -> String? {
        guard a.typeName == b.typeName else { return "\(path): recorded \(a.typeName), sent \(b.typeName)" }
        guard case .object(let am) = a, case .object(let bm) = b else { return nil }
        let ak = am.map(\.key).sorted(), bk = bm.map(\.key).sorted()
        guard ak == bk else { return "\(path): recorded keys \(ak), sent \(bk)" }
        for (k, v) in am { if let d = shapeDifference(v, b[k]!, path: path + "." + k) { return d } }
        return nil
    }
}
