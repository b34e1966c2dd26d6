#if canImport(Glibc)
import Glibc
#endif
import MPinClient
import MPinJSON
import Synchronization

/// One recorded exchange of ../shared/fixtures/recorded-http.json (the original SDK's test
/// traffic).
public struct Exchange: Sendable {
    public let context: String
    public let method: String
    public let url: String
    public let requestBody: String
    public let status: Int
    public let responseBody: String
}

/// A reference file the tests need is not there.
public struct FixtureMissing: Error, CustomStringConvertible {
    public let path: String
    public var description: String { "missing fixture \(path) (the tests need ../shared beside the package)" }
}

/// The reference material the package's tests read from ../shared.
public enum Fixtures {
    /// ../shared, beside the package directory: the nearest ancestor of this source file
    /// holding Package.swift, then its sibling `shared`.
    public static func root(file: StaticString = #filePath) -> String {
        var dir = "\(file)"
        while let slash = dir.lastIndex(of: "/"), slash != dir.startIndex {
            dir = String(dir[..<slash])
            if access(dir + "/Package.swift", F_OK) == 0 {
                let parent = dir.lastIndex(of: "/").map { String(dir[..<$0]) } ?? ""
                return parent + "/shared"
            }
        }
        return "/nonexistent"
    }

    /// The bytes of `relative` under ../shared.
    public static func contents(_ relative: String) throws -> [UInt8] {
        let path = root() + "/" + relative
        guard let file = fopen(path, "rb") else { throw FixtureMissing(path: path) }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
            if n == 0 { break }
            bytes += chunk[..<n]
        }
        guard ferror(file) == 0 else { throw FixtureMissing(path: path) }
        return bytes
    }

    /// The recorded exchanges, in the order they happened.
    public static func recording() throws -> [Exchange] {
        let json = try JSONParser().parse(try contents("fixtures/recorded-http.json"))
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
public final class ReplayTransport: HTTPTransport, Sendable {
    private struct State {
        var queue: [Exchange]
        var mismatches: [String] = []
        var sent: [HTTPRequest] = []
    }
    private let state: Mutex<State>

    public init(_ exchanges: [Exchange]) { state = Mutex(State(queue: exchanges)) }

    /// Recorded exchanges not requested yet.
    public var remaining: [Exchange] { state.withLock { $0.queue } }
    /// Requests that differed from the recording.
    public var mismatches: [String] { state.withLock { $0.mismatches } }
    /// Every request received.
    public var sent: [HTTPRequest] { state.withLock { $0.sent } }

    public func send(_ request: HTTPRequest) throws(HTTPTransportError) -> HTTPResponse {
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
    public static func bodyDifference(recorded: String, sent: [UInt8]) -> String? {
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
