// An incremental HTTP/1.1 response parser for PlainHTTPTransport: bytes go in as they arrive,
// a complete response (or a reason to give up) comes out. Framing follows RFC 9112 section 6.3:
// no body for 1xx/204/304, chunked when Transfer-Encoding ends in chunked, else Content-Length,
// else everything until the server closes.

/// Why a reply cannot be read as an HTTP/1.1 response.
enum HTTPReplyError: Error, Equatable {
    /// The reply breaks HTTP/1.1 framing or syntax; the text says how (never quotes the reply).
    case malformed(String)
    /// Headers and body together exceed the configured limit.
    case tooLarge
}

/// Collects one response from the bytes a connection delivers.
struct HTTPResponseReader {
    private enum Framing: Equatable {
        case none
        case length(Int)
        case chunked
        case untilClose
    }

    private enum ChunkState: Equatable {
        case sizeLine
        case data(remaining: Int)
        case dataEnd
        case trailers
    }

    /// The largest response head accepted (CurlResponseSink uses it too).
    static let maxHeadBytes = 64 * 1024
    private static let maxChunkLineBytes = 1024

    /// Largest response accepted, head and body together.
    let limit: Int
    /// Bytes received so far and not yet parsed.
    private var pending: [UInt8] = []
    /// Where the unparsed bytes of `pending` start (consumed bytes are dropped in batches, so
    /// hostile one-byte chunks cost no quadratic copying).
    private var start = 0
    /// Where the search for the end of the head resumes.
    private var headScan = 0
    private var consumed = 0
    private var framing: Framing?
    private var chunkState = ChunkState.sizeLine
    private(set) var status = 0
    private(set) var headers: [String: String] = [:]
    private(set) var body: [UInt8] = []
    /// True once the response is complete.
    private(set) var isComplete = false
    /// Whether the connection may carry another request after this response.
    private(set) var keepsConnection = false
    /// True until the first byte arrives (a reused connection that closes before then is stale).
    private(set) var receivedNothing = true

    init(limit: Int) { self.limit = limit }

    /// Where a response stands after the latest bytes.
    enum Progress: Equatable {
        case needsMore
        case complete
        case failed(HTTPReplyError)
    }

    /// Adds bytes as they arrive. Bytes past the end of the response make the connection
    /// unusable for another request.
    mutating func receive(_ bytes: ArraySlice<UInt8>) -> Progress {
        guard !bytes.isEmpty else { return isComplete ? .complete : .needsMore }
        receivedNothing = false
        consumed += bytes.count
        guard consumed <= limit else { return .failed(.tooLarge) }
        pending.append(contentsOf: bytes)
        do {
            try parse()
        } catch {
            return .failed(error)
        }
        guard isComplete else { return .needsMore }
        if unreadCount > 0 { keepsConnection = false }
        return .complete
    }

    /// The server closed the connection: complete if the body runs until close, else a failure.
    mutating func receiveEnd() -> Progress {
        if isComplete { return .complete }
        if framing == .untilClose {
            isComplete = true
            keepsConnection = false
            return .complete
        }
        if receivedNothing { return .failed(.malformed("the server closed the connection without replying")) }
        return .failed(.malformed("the server closed the connection before the response was complete"))
    }

    // MARK: - Parsing

    private mutating func parse() throws(HTTPReplyError) {
        while !isComplete {
            if framing == nil {
                guard try parseHead() else { return }
                continue
            }
            guard try parseBody() else { return }
        }
    }

    /// Parses a complete head if one has arrived; false when more bytes are needed.
    private mutating func parseHead() throws(HTTPReplyError) -> Bool {
        guard let (headLength, headEnd) = Self.findHeadEnd(pending, from: max(start, headScan)) else {
            if unreadCount > Self.maxHeadBytes { throw .tooLarge }
            if unreadCount >= 5, !pending[start...].starts(with: Array("HTTP/".utf8)) {
                throw .malformed("the reply is not HTTP/1.x")
            }
            headScan = max(start, pending.count - 3)  // a line end may straddle the next read
            return false
        }
        guard headEnd - start <= Self.maxHeadBytes else { throw .tooLarge }
        var lines = pending[start..<headLength].split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            .map { $0.last == UInt8(ascii: "\r") ? $0.dropLast() : $0 }
        consume(headEnd - start)
        headScan = start
        let statusLine = lines.removeFirst()
        let (version, code) = try Self.parseStatusLine(statusLine)

        var fields: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
                throw .malformed("a header line has no colon")
            }
            let name = line[..<colon]
            guard !name.isEmpty, name.allSatisfy(HTTPRequestRules.isTokenByte) else {
                throw .malformed("a header name is not a token (or the header is folded)")
            }
            let value = trimmingBlanks(line[(colon + 1)...])
            guard !value.contains(0) else { throw .malformed("a header value contains NUL") }
            addHeaderField(name: name, value: value, to: &fields)
        }

        // Interim responses (100 Continue, 103 Early Hints) precede the real one.
        if (100...199).contains(code) {
            guard code != 101 else { throw .malformed("the server switched protocols") }
            return true
        }
        status = code
        headers = fields
        let connectionTokens = Self.tokens(fields["connection"])
        keepsConnection = version == 1 ? !connectionTokens.contains("close") : connectionTokens.contains("keep-alive")

        if code == 204 || code == 304 {
            framing = Framing.none
        } else if let encoding = fields["transfer-encoding"] {
            if Self.tokens(encoding).last == "chunked" {
                framing = .chunked
            } else {
                framing = .untilClose
            }
            // Transfer-Encoding with Content-Length smells of request smuggling: read it, then
            // never reuse the connection.
            if fields["content-length"] != nil { keepsConnection = false }
        } else if let lengthText = fields["content-length"] {
            let length = try Self.parseContentLength(lengthText)
            guard consumed - unreadCount + length <= limit else { throw .tooLarge }
            framing = .length(length)
        } else {
            framing = .untilClose
        }
        if framing == .untilClose { keepsConnection = false }
        return true
    }

    /// Moves body bytes out of `pending`; false when more bytes are needed.
    private mutating func parseBody() throws(HTTPReplyError) -> Bool {
        switch framing {
        case .none?:
            isComplete = true
        case .length(let length)?:
            let take = min(length - body.count, unreadCount)
            body.append(contentsOf: pending[start..<(start + take)])
            consume(take)
            if body.count == length { isComplete = true } else { return false }
        case .untilClose?:
            body.append(contentsOf: pending[start...])
            consume(unreadCount)
            return false
        case .chunked?:
            return try parseChunk()
        case nil:
            return false
        }
        return true
    }

    private mutating func parseChunk() throws(HTTPReplyError) -> Bool {
        switch chunkState {
        case .sizeLine:
            guard let line = try takeLine() else { return false }
            let digits = line.prefix { $0 != UInt8(ascii: ";") }
            let size = try Self.parseChunkSize(trimmingBlanks(digits[...]))
            guard consumed - unreadCount + size <= limit, body.count + size <= limit else { throw .tooLarge }
            chunkState = size == 0 ? .trailers : .data(remaining: size)
        case .data(let remaining):
            let take = min(remaining, unreadCount)
            guard take > 0 else { return false }
            body.append(contentsOf: pending[start..<(start + take)])
            consume(take)
            chunkState = take == remaining ? .dataEnd : .data(remaining: remaining - take)
        case .dataEnd:
            guard let line = try takeLine() else { return false }
            guard line.isEmpty else { throw .malformed("a chunk is longer than its size") }
            chunkState = .sizeLine
        case .trailers:
            guard let line = try takeLine() else { return false }
            if line.isEmpty { isComplete = true }
        }
        return true
    }

    /// The next line of `pending` without its line end, or nil when it has not fully arrived.
    private mutating func takeLine() throws(HTTPReplyError) -> [UInt8]? {
        guard let newline = pending[start...].firstIndex(of: UInt8(ascii: "\n")) else {
            if unreadCount > Self.maxChunkLineBytes { throw .malformed("a chunk line is too long") }
            return nil
        }
        var line = Array(pending[start..<newline])
        consume(newline + 1 - start)
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        return line
    }

    private var unreadCount: Int { pending.count - start }

    /// Marks `count` unread bytes as parsed; drops parsed bytes once they are most of the buffer.
    private mutating func consume(_ count: Int) {
        start += count
        guard start == pending.count || (start >= 4096 && start * 2 >= pending.count) else { return }
        pending.removeFirst(start)
        headScan = max(0, headScan - start)
        start = 0
    }

    // MARK: - Pieces

    /// Where the head ends (without the blank line) and the offset just past the blank line,
    /// searching from `from`.
    private static func findHeadEnd(_ bytes: [UInt8], from: Int) -> (Int, Int)? {
        var index = from
        while let newline = bytes[index...].firstIndex(of: UInt8(ascii: "\n")) {
            var next = newline + 1
            if next < bytes.count, bytes[next] == UInt8(ascii: "\r") { next += 1 }
            guard next < bytes.count else { return nil }
            if bytes[next] == UInt8(ascii: "\n") { return (newline, next + 1) }
            index = newline + 1
        }
        return nil
    }

    /// `HTTP/1.x SSS reason`: the minor version and the status code.
    private static func parseStatusLine(_ line: ArraySlice<UInt8>) throws(HTTPReplyError) -> (Int, Int) {
        let bytes = Array(line)
        guard bytes.count >= 12, bytes.starts(with: Array("HTTP/1.".utf8)),
              (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[7]), bytes[8] == UInt8(ascii: " ") else {
            throw .malformed("the reply is not HTTP/1.x")
        }
        let digits = bytes[9..<12]
        guard digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              bytes.count == 12 || bytes[12] == UInt8(ascii: " ") else {
            throw .malformed("the status line has no valid status code")
        }
        let code = digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        guard (100...599).contains(code) else { throw .malformed("the status line has no valid status code") }
        return (Int(bytes[7] - UInt8(ascii: "0")), code)
    }

    /// One decimal length, or a list of equal ones (a proxy may have merged duplicates).
    private static func parseContentLength(_ text: String) throws(HTTPReplyError) -> Int {
        var length: Int?
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let digits = Array(trimmingBlanks(ArraySlice(part.utf8)))
            guard !digits.isEmpty, digits.count <= 15,
                  digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
                throw .malformed("Content-Length is not a number")
            }
            let value = digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
            guard length == nil || length == value else { throw .malformed("Content-Length values disagree") }
            length = value
        }
        guard let length else { throw .malformed("Content-Length is empty") }
        return length
    }

    private static func parseChunkSize(_ digits: ArraySlice<UInt8>) throws(HTTPReplyError) -> Int {
        guard !digits.isEmpty, digits.count <= 15 else { throw .malformed("a chunk size is not a hex number") }
        var size = 0
        for digit in digits {
            let value: Int
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = Int(digit - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = Int(digit - UInt8(ascii: "a")) + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): value = Int(digit - UInt8(ascii: "A")) + 10
            default: throw .malformed("a chunk size is not a hex number")
            }
            size = size * 16 + value
        }
        return size
    }

    /// Lower-cased comma-separated tokens of a header value.
    private static func tokens(_ value: String?) -> [String] {
        guard let value else { return [] }
        return value.split(separator: ",").map { String(decoding: trimmingBlanks(ArraySlice($0.utf8)), as: UTF8.self).lowercased() }
    }

}

// Shared with CurlResponseSink, so both transports report headers alike.

/// Without leading and trailing spaces and tabs (RFC 9110 OWS).
func trimmingBlanks(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
    var slice = bytes
    while let first = slice.first, first == 32 || first == 9 { slice.removeFirst() }
    while let last = slice.last, last == 32 || last == 9 { slice.removeLast() }
    return slice
}

/// Adds one field under its lower-cased name; a repeated name joins the values with ", ".
func addHeaderField(name: ArraySlice<UInt8>, value: ArraySlice<UInt8>, to fields: inout [String: String]) {
    let key = String(decoding: name, as: UTF8.self).lowercased()
    let text = String(decoding: value, as: UTF8.self)
    // Appended in place: a head repeating one name must not copy the growing value each time.
    if let index = fields.index(forKey: key) { fields.values[index] += ", " + text } else { fields[key] = text }
}
