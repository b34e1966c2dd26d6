import Foundation
package import Logging
import ServiceLifecycle

/// Deletes expired short-lived records (registrations, authOTTs, access numbers, sessions)
/// every `interval`, for as long as the server runs: a service of the server's lifecycle,
/// so that it starts and stops with it.
package struct PurgeService: Service {
    let storage: any ServerStorage
    var interval: Duration = .seconds(60)
    let logger: Logger

    init(storage: any ServerStorage, interval: Duration = .seconds(60), logger: Logger) {
        self.storage = storage; self.interval = interval; self.logger = logger
    }

    /// A purge of an SQLite database on its own (the server builds its own from its storage).
    package init(storage: SQLiteStorage, interval: Duration, logger: Logger) {
        self.init(storage: storage as any ServerStorage, interval: interval, logger: logger)
    }

    package func run() async throws {
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
