// Receiving a response through libcurl's write and header callbacks, with a size limit.

/// Accumulates one response; touched only by the thread running `curl_easy_perform`.
final class ResponseSink {
    let limit: Int
    var received = 0
    var tooLarge = false
    var body: [UInt8] = []
    var headers: [String: String] = [:]
    /// Whether the blank line ending the final head has arrived: curl reports a reply cut off
    /// inside its head as a success, so the transport checks this.
    private(set) var headComplete = false
    private var inHead = false
    /// Bytes of the current head: capped as PlainHTTPTransport caps it.
    private var headBytes = 0

    init(limit: Int) { self.limit = limit }

    /// Counts `count` more bytes; false once the response is past the limit.
    func admit(_ count: Int) -> Bool {
        received += count
        if received > limit { tooLarge = true }
        return !tooLarge
    }

    func addHeaderLine(_ bytes: UnsafeRawBufferPointer) {
        headBytes += bytes.count
        if headBytes > HTTPResponseReader.maxHeadBytes { tooLarge = true }
        var line = ArraySlice(bytes)
        while let last = line.last, last == 13 || last == 10 { line.removeLast() }
        if line.starts(with: Array("HTTP/".utf8)) {
            // A new status line: a 100 Continue or a proxy's reply came first; keep only the last.
            headers = [:]
            inHead = true
            headComplete = false
            headBytes = bytes.count
            return
        }
        if line.isEmpty {
            if inHead { headComplete = true }
            inHead = false
            return
        }
        // Lines after the head's end are chunked trailers: dropped, as PlainHTTPTransport does.
        guard inHead, let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return }
        addHeaderField(name: line[..<colon], value: trimmingBlanks(line[(colon + 1)...]), to: &headers)
    }
}

/// libcurl's write callback: the body bytes, counted against the limit.
func curlReceiveBody(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int,
                     _ context: UnsafeMutableRawPointer?) -> Int {
    receive(data, size * count, context) { sink, bytes in sink.body.append(contentsOf: bytes) }
}

/// libcurl's header callback: one header line, counted against the same limit.
func curlReceiveHeader(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int,
                       _ context: UnsafeMutableRawPointer?) -> Int {
    receive(data, size * count, context) { sink, bytes in sink.addHeaderLine(bytes) }
}

/// Admits `length` bytes to the sink behind `context` and hands them on; returning less than
/// `length` makes curl abort the transfer (CURLE_WRITE_ERROR).
private func receive(_ data: UnsafeMutablePointer<CChar>?, _ length: Int, _ context: UnsafeMutableRawPointer?,
                     _ deliver: (ResponseSink, UnsafeRawBufferPointer) -> Void) -> Int {
    guard let context else { return 0 }
    let sink = Unmanaged<ResponseSink>.fromOpaque(context).takeUnretainedValue()
    guard length > 0, let data else { return length }
    guard sink.admit(length) else { return 0 }
    deliver(sink, UnsafeRawBufferPointer(start: data, count: length))
    return length
}
