package import Hummingbird
package import NIOCore

/// The request context of every route: Hummingbird's basic one plus the peer's address, which
/// the access-number rate limit counts by.
package struct ServerRequestContext: RequestContext, RemoteAddressRequestContext {
    package var coreContext: CoreRequestContextStorage
    /// The connection's peer; nil when the channel has none (tests without sockets).
    package let remoteAddress: SocketAddress?

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}

extension RequestContext {
    /// The peer's IP address as text, or "unknown".
    var clientAddress: String {
        guard let address = (self as? any RemoteAddressRequestContext)?.remoteAddress else { return "unknown" }
        return address.ipAddress ?? "unknown"
    }
}
