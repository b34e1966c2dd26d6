import Foundation
import MPinClient
import MPinJSON
import MPinReferenceData
import XCTest

/// One recorded exchange of ../shared/fixtures/recorded-http.json.
struct Exchange {
    let context: String
    let method: String
    let url: String
    let requestBody: String
    let status: Int
    let responseBody: String
}

enum Fixtures {
    static func recording() throws -> [Exchange] {
        let data = try ReferenceData.data("fixtures/recorded-http.json")
        let json = try JSONParser().parse(Array(data))
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
/// method and URL. Status 0 in the recording means the connection failed.
final class ReplayTransport: HTTPTransport, @unchecked Sendable {
    private var queue: [Exchange]
    private let lock = NSLock()
    private(set) var mismatches: [String] = []
    private(set) var sent: [HTTPRequest] = []

    init(_ exchanges: [Exchange]) { queue = exchanges }

    var remaining: [Exchange] { lock.withLock { queue } }

    func send(_ request: HTTPRequest) throws(HTTPTransportError) -> HTTPResponse {
        let next: Exchange? = lock.withLock {
            sent.append(request)
            return queue.isEmpty ? nil : queue.removeFirst()
        }
        guard let next else {
            lock.withLock { mismatches.append("unexpected \(request.method.rawValue) \(request.url)") }
            throw .connectionRefused(host: "replay")
        }
        guard next.method == request.method.rawValue, next.url == request.url else {
            lock.withLock {
                mismatches.append("expected \(next.method) \(next.url), got \(request.method.rawValue) \(request.url)")
            }
            throw .connectionRefused(host: "replay")
        }
        if next.status == 0 { throw .hostNotFound(host: "recorded failure") }
        if let problem = Self.bodyDifference(recorded: next.requestBody, sent: request.body ?? []) {
            lock.withLock { mismatches.append("\(next.method) \(next.url): \(problem)") }
        }
        return HTTPResponse(status: next.status, body: Array(next.responseBody.utf8))
    }
}

extension ReplayTransport {
    /// The recorded and the sent body must both be empty, or JSON objects with the same keys
    /// (recursively) and values of the same types.
    static func bodyDifference(recorded: String, sent: [UInt8]) -> String? {
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

/// In-memory storage, for tests of the core alone.
final class MemoryStorage: SecureStorage, @unchecked Sendable {
    private var values: [String: [UInt8]] = [:]
    private let lock = NSLock()
    private(set) var writes = 0

    func read(_ name: String) throws(StorageError) -> [UInt8]? { lock.withLock { values[name] } }
    func write(_ name: String, _ value: [UInt8]) throws(StorageError) {
        lock.withLock { values[name] = value; writes += 1 }
    }
    func delete(_ name: String) throws(StorageError) { _ = lock.withLock { values.removeValue(forKey: name) } }
    func text(_ name: String) -> String { lock.withLock { values[name].map { String(decoding: $0, as: UTF8.self) } ?? "" } }
    var names: [String] { lock.withLock { Array(values.keys) } }
}

struct TestContext: PlatformContext {
    let transport: any HTTPTransport
    let secureStorage: any SecureStorage
    let nonSecureStorage: any Storage
}
