// A deliberately small HTTP/1.1 client for the load benchmark: one blocking keep-alive
// connection per client thread, so the load generator costs little CPU next to the server it
// measures (URLSession on Linux cost more CPU than the server's own request handling).
#if canImport(Glibc)
import Glibc
#endif
import MPinJSON

struct BenchError: Error, CustomStringConvertible {
    let what: String
    var description: String { what }
}

final class LoadClient {
    private var fd: Int32 = -1
    private let port: UInt16
    private var buffer: [UInt8] = []

    init(port: Int) { self.port = UInt16(port) }
    deinit { if fd >= 0 { close(fd) } }

    private func connectIfNeeded() throws {
        guard fd < 0 else { return }
        let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard s >= 0 else { throw BenchError(what: "socket failed") }
        var one: Int32 = 1
        setsockopt(s, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        addr.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else { close(s); throw BenchError(what: "connect failed") }
        fd = s
        buffer.removeAll(keepingCapacity: true)
    }

    /// Sends one request and returns the status and body. Reconnects once if the server closed
    /// an idle keep-alive connection.
    func send(_ method: String, _ path: String, body: String? = nil) throws -> (Int, [UInt8]) {
        do { return try attempt(method, path, body) } catch {
            if fd >= 0 { close(fd); fd = -1 }
            return try attempt(method, path, body)
        }
    }

    private func attempt(_ method: String, _ path: String, _ body: String?) throws -> (Int, [UInt8]) {
        try connectIfNeeded()
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        let bytes = Array((body ?? "").utf8)
        if body != nil { head += "Content-Type: application/json\r\nContent-Length: \(bytes.count)\r\n" }
        let request = Array((head + "\r\n").utf8) + bytes
        var sent = 0
        while sent < request.count {
            let n = request.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, request.count - sent, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw BenchError(what: "send failed") }
            sent += n
        }
        return try readResponse()
    }

    private var chunk = [UInt8](repeating: 0, count: 16_384)

    private func fill() throws {
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { throw BenchError(what: "connection closed") }
        buffer.append(contentsOf: chunk[0..<n])
    }

    /// The index of the blank line ending the head, if it has arrived.
    private func headEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for i in 0...(buffer.count - 4) where buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 {
            return i
        }
        return nil
    }

    private func readResponse() throws -> (Int, [UInt8]) {
        var end = headEnd()
        while end == nil { try fill(); end = headEnd() }
        let headerEnd = end!
        // "HTTP/1.1 NNN": the status is bytes 9..<12.
        guard headerEnd >= 12 else { throw BenchError(what: "bad status line") }
        guard buffer[9..<12].allSatisfy({ (48...57).contains($0) }) else { throw BenchError(what: "bad status line") }
        let status = buffer[9..<12].reduce(0) { $0 * 10 + Int($1) - 48 }
        var length = 0
        let head = String(decoding: buffer[0..<headerEnd], as: UTF8.self)
        for line in head.split(separator: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":"),
                  line[..<colon].utf8.elementsEqual("content-length".utf8, by: { $0 | 0x20 == $1 }) else { continue }
            length = Int(line[line.index(after: colon)...].drop(while: { $0 == " " })) ?? 0
        }
        guard (0...(64 << 20)).contains(length) else { throw BenchError(what: "bad Content-Length") }
        let start = headerEnd + 4
        while buffer.count < start + length { try fill() }
        let body = Array(buffer[start..<start + length])
        buffer.removeSubrange(0..<start + length)
        return (status, body)
    }

    /// A 200 response's JSON object, else an error naming the request.
    func json(_ method: String, _ path: String, body: String? = nil) throws -> JSONValue {
        let (status, data) = try send(method, path, body: body)
        guard status == 200 else { throw BenchError(what: "\(method) \(path) → \(status)") }
        return try JSONParser().parse(data)
    }
}

extension JSONValue {
    func string(_ key: String) throws -> String {
        guard let s = self[key]?.stringValue else { throw BenchError(what: "missing \(key)") }
        return s
    }
}
