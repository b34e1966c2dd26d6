import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One HTTP/1.1 exchange over a plain socket to 127.0.0.1, for what URLSession hides: it
/// follows redirects (an error redirect of `/authorize` must be seen, not followed) and, on
/// Linux, does not complete a request answered 401 with a `WWW-Authenticate` challenge.
enum RawHTTP {
    struct Failure: Error, CustomStringConvertible { let description: String }

    /// `base` is `http://127.0.0.1:PORT`. Headers are returned lower-cased.
    static func send(_ base: String, _ method: String, _ path: String, body: Data = Data(),
                     headers: [String: String] = [:]) throws -> HTTPResult {
        try parse(exchange(base, method, path, body: body, headers: headers))
    }

    /// The status line and header lines of the answer, as sent, in order.
    static func head(_ base: String, _ method: String, _ path: String, body: Data = Data()) throws -> [String] {
        let text = String(decoding: try exchange(base, method, path, body: body), as: UTF8.self)
        guard let end = text.range(of: "\r\n\r\n") else { throw Failure(description: "no header end") }
        return text[..<end.lowerBound].components(separatedBy: "\r\n")
    }

    /// The answer's bytes.
    static func exchange(_ base: String, _ method: String, _ path: String, body: Data = Data(),
                         headers: [String: String] = [:]) throws -> [UInt8] {
        guard let url = URL(string: base), let port = url.port else { throw Failure(description: "bad base \(base)") }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure(description: "connect to \(port)") }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        let request = Array((head + "\r\n").utf8) + Array(body)
        var sent = 0
        while sent < request.count {
            let n = request[sent...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw Failure(description: "write") }
            sent += n
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 { throw Failure(description: "read") }
            if n == 0 { break }
            received += buffer[0..<n]
        }
        return received
    }

    static func parse(_ bytes: [UInt8]) throws -> HTTPResult {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let split = (0...(max(0, bytes.count - 4))).first(where: { Array(bytes[$0..<min($0 + 4, bytes.count)]) == separator })
        else { throw Failure(description: "no header end") }
        let lines = String(decoding: bytes[0..<split], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw Failure(description: "status line \(lines[0])") }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = headers[name].map { $0 + ", " + value } ?? value
        }
        var body = Array(bytes[(split + 4)...])
        if headers["transfer-encoding"]?.lowercased() == "chunked" {
            var out: [UInt8] = []
            var i = 0
            while i < body.count {
                guard let end = (i..<(body.count - 1)).first(where: { body[$0] == 13 && body[$0 + 1] == 10 }),
                      let size = Int(String(decoding: body[i..<end], as: UTF8.self).split(separator: ";")[0], radix: 16)
                else { throw Failure(description: "chunk") }
                if size == 0 { break }
                out += body[(end + 2)..<(end + 2 + size)]
                i = end + 2 + size + 2
            }
            body = out
        }
        return HTTPResult(status: status, body: Data(body), headers: headers)
    }
}
