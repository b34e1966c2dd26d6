import Foundation
import Logging
import ServiceLifecycle

/// Deletes expired short-lived records (registrations, authOTTs, access numbers, sessions)
/// every `interval`, for as long as the server runs: a service of the server's lifecycle,
/// so that it starts and stops with it.
struct PurgeService: Service {
    let storage: any ServerStorage
    var interval: Duration = .seconds(60)
    let logger: Logger

    func run() async throws {
        // Stops at the server's graceful shutdown as well as at cancellation.
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do { try await Task.sleep(for: interval) } catch { return }
                do { try await storage.purgeExpired(now: Date()) } catch {
                    logger.warning("purge of expired records failed", metadata: ["error": "\(type(of: error))"])
                }
            }
        }
    }
}
