import MPinClient
import Synchronization

/// A transport answering from a closure, for responses no recording or backend double has.
package final class ScriptedTransport: HTTPTransport, Sendable {
    private let answer: @Sendable (HTTPRequest) throws(HTTPTransportError) -> HTTPResponse

    package init(_ answer: @escaping @Sendable (HTTPRequest) throws(HTTPTransportError) -> HTTPResponse) {
        self.answer = answer
    }

    package func send(_ request: HTTPRequest) throws(HTTPTransportError) -> HTTPResponse { try answer(request) }
}

/// Passes requests to another transport and keeps every request it was given, in order.
package final class RecordingTransport: HTTPTransport, Sendable {
    private let base: any HTTPTransport
    private let requests = Mutex<[HTTPRequest]>([])

    package init(base: any HTTPTransport) { self.base = base }

    package func send(_ request: HTTPRequest) throws(HTTPTransportError) -> HTTPResponse {
        requests.withLock { $0.append(request) }
        return try base.send(request)
    }

    /// The requests sent so far.
    package var sent: [HTTPRequest] { requests.withLock { $0 } }

    /// How many of the URLs sent contain `fragment`.
    package func count(containing fragment: String) -> Int { sent.filter { $0.url.contains(fragment) }.count }
}
