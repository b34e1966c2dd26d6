// The load benchmark's client: the project's own HTTP/1.1 client, PlainHTTPTransport (what the
// PAM module uses for plain http to an IP address), so the bench exercises the client code that
// logins run and keeps no HTTP implementation of its own.

import MPinClient
import MPinJSON
import MPinLinux

struct BenchError: Error, CustomStringConvertible {
    let what: String
    var description: String { what }
}

/// One client of the load benchmark, used by one thread.
///
/// Each instance has its own PlainHTTPTransport, and so its own keep-alive connection: one
/// connection per load thread, as with a real client. The transport blocks the calling thread
/// and starts none of its own, so the thread's CPU clock counts all the client's work, which
/// main.swift subtracts from the process's CPU to get the server's. (URLSession on Linux cost
/// more CPU than the server's own request handling, hence a small blocking client.)
final class LoadClient {
    private let transport: PlainHTTPTransport
    private let origin: String

    init(port: Int) {
        transport = PlainHTTPTransport(configuration: LinuxHTTPConfiguration(reusesConnection: true))
        origin = "http://127.0.0.1:\(port)"
    }

    /// Sends one request and returns the status and body. The transport reopens a kept
    /// connection the server had closed while idle (once, and a POST only if the server cannot
    /// have received it).
    func send(_ method: HTTPMethod, _ path: String, body: String? = nil) throws -> (Int, [UInt8]) {
        let request = HTTPRequest(method: method, url: origin + path,
                                  headers: body == nil ? [:] : ["Content-Type": "application/json"],
                                  body: body.map { Array($0.utf8) })
        let response = try transport.send(request)
        return (response.status, response.body)
    }

    /// A 200 response's JSON object, else an error naming the request.
    func json(_ method: HTTPMethod, _ path: String, body: String? = nil) throws -> JSONValue {
        let (status, data) = try send(method, path, body: body)
        // The path only: a query can hold a regOTT.
        guard status == 200 else {
            throw BenchError(what: "\(method.rawValue) \(path.prefix { $0 != "?" }) → \(status)")
        }
        return try JSONParser().parse(data)
    }
}

extension JSONValue {
    func string(_ key: String) throws -> String {
        guard let s = self[key]?.stringValue else { throw BenchError(what: "missing \(key)") }
        return s
    }
}
