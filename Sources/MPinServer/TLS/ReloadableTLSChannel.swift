import HummingbirdCore
import Logging
import NIOCore
import NIOSSL
import Synchronization

/// The TLS context new connections get. A reload replaces it; connections already set up keep
/// the context they started with (a `NIOSSLHandler` holds its own reference), so nothing in
/// flight is dropped.
package final class TLSContextBox: Sendable {
    private let current: Mutex<TLSCredentials>

    package init(_ credentials: TLSCredentials) { current = Mutex(credentials) }

    package var credentials: TLSCredentials { current.withLock { $0 } }

    /// Loads `files` again and, if they pass every check of a start, uses them for new
    /// connections. Throws, keeping the current credentials, if they do not.
    @discardableResult
    func reload(from files: TLSFiles) throws(TLSSetupError) -> TLSCredentials {
        let fresh = try TLSCredentials.load(files)
        current.withLock { $0 = fresh }
        return fresh
    }
}

/// A Hummingbird child channel that puts TLS in front of `Base`, with the context read from a
/// `TLSContextBox` for every new connection. HummingbirdTLS's `TLSChannel` (whose shape this
/// follows) makes its `NIOSSLContext` once, when the server is built, so it cannot reload.
struct ReloadableTLSChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value

    let base: Base
    let box: TLSContextBox

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let context = box.credentials.context
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

extension ReloadableTLSChannel: HTTPChannelHandler where Base: HTTPChannelHandler {
    var responder: HTTPChannelHandler.Responder { base.responder }
}

extension HTTPServerBuilder {
    /// HTTP/1.1 over TLS, the context taken from `box` at each new connection, each connection
    /// handled on its event loop (`EventLoopBoundChannel`).
    /// Under `table`'s cap and deadlines, which count the TLS handshake in the head's time.
    static func reloadableTLS(_ box: TLSContextBox, _ table: ConnectionTable) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            EventLoopBoundChannel(base: GuardedChannel(
                base: ReloadableTLSChannel(base: HTTP1Channel(responder: responder, configuration: .init()), box: box),
                table: table))
        }
    }
}
