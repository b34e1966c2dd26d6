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
    let logger: Logger

    struct Health: Encodable, Sendable {
        var status: String
        var database: String
        var keys: String
    }

    func add<Context: RequestContext>(to router: Router<Context>) {
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
        router.get("metrics") { _, _ -> Response in
            Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
                     body: .init(byteBuffer: ByteBuffer(string: metrics.exposition())))
        }
    }
}
