import Foundation
import Hummingbird
import Logging

/// `GET /health` and `GET /metrics`, served beside the protocol's endpoints.
///
/// `/health` answers 200 `{"status":"ok","database":"ok","keys":"loaded"}` when a query on the
/// database succeeds, else 503 with `"database":"unreachable"`. The keys (app key, D-TA
/// shares, the server secret recombined from both D-TAs) are loaded before the server listens,
/// so a server that answers has them. Neither endpoint names a user or a secret.
struct HealthRoutes: Sendable {
    let storage: (any ServerStorage)?
    let metrics: ServerMetrics
    /// Opens `/metrics` to a request from any address that carries `Authorization: Bearer TOKEN`.
    var metricsToken: String? = nil
    let logger: Logger

    struct Health: Encodable, Sendable {
        var status: String
        var database: String
        var keys: String
    }

    func add<Context: RequestContext>(to router: some RouterMethods<Context>) {
        router.get("health") { _, _ -> Response in
            var health = Health(status: "ok", database: "ok", keys: "loaded")
            if let storage {
                do { try await storage.healthCheck() } catch {
                    metrics.recordDatabaseError()
                    logger.error("health check: database unreachable", metadata: ["error": "\(type(of: error))"])
                    health.status = "unavailable"; health.database = "unreachable"
                }
            } else {
                health.database = "none"  // a D-TA alone has no database
            }
            let body = try JSONEncoder().encode(health)
            return Response(status: health.status == "ok" ? .ok : .serviceUnavailable,
                            headers: [.contentType: "application/json", .cacheControl: "no-store"],
                            body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
        router.get("metrics") { request, context -> Response in
            // Loopback only (a scraper on the host, or a proxy there), or the bearer token of
            // DIR/metrics.token: the counters tell anyone how many logins fail (docs/SECURITY.md §5).
            // Elsewhere the path does not exist.
            guard Self.isLoopback(context.clientAddress)
                    || Self.presents(metricsToken, request.headers[.authorization]) else {
                return Response(status: .notFound, headers: [.contentType: "application/json; charset=UTF-8"],
                                body: .init(byteBuffer: ByteBuffer(string: #"{"message":"URI NOT FOUND"}"#)))
            }
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
                     body: .init(byteBuffer: ByteBuffer(string: metrics.exposition())))
        }
    }

    /// 127.0.0.0/8, ::1 and IPv4-mapped 127.0.0.0/8.
    static func isLoopback(_ address: String) -> Bool {
        address.hasPrefix("127.") || address == "::1" || address.lowercased().hasPrefix("::ffff:127.")
    }

    /// Whether `authorization` is `Bearer TOKEN` with the configured token, compared in time
    /// independent of where they differ.
    static func presents(_ token: String?, _ authorization: String?) -> Bool {
        guard let token, let authorization, authorization.hasPrefix("Bearer ") else { return false }
        let given = Array(authorization.utf8.dropFirst(7)), wanted = Array(token.utf8)
        guard given.count == wanted.count else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(given, wanted) { difference |= a ^ b }
        return difference == 0
    }
}
