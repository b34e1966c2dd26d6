import Logging
import ServiceLifecycle
import UnixSignals

/// Reloads the certificate and key on SIGHUP. A reload that fails (unreadable file, key
/// readable by others, certificate not matching the key) keeps the current ones and logs why.
struct TLSReloadService: Service {
    /// The files and the context new connections get; nil when serving plain HTTP.
    let tls: (files: TLSFiles, box: TLSContextBox)?
    /// Made before the server starts, so that a SIGHUP after the "ready" line is never the
    /// default action (termination).
    let signals: UnixSignalsSequence
    let logger: Logger

    func run() async {
        for await _ in signals.cancelOnGracefulShutdown() {
            reload()
        }
    }

    func reload() {
        guard let (files, box) = tls else {
            logger.notice("SIGHUP: no TLS certificate to reload (plain HTTP)")
            return
        }
        do {
            let fresh = try box.reload(from: files)
            logger.notice("TLS certificate reloaded", metadata: [
                "certificate": "\(files.certificatePath)", "sha256": "\(fresh.fingerprint)",
                "notValidAfter": "\(fresh.notValidAfter)",
            ])
        } catch {
            logger.error("TLS reload failed, keeping the current certificate", metadata: ["reason": "\(error)"])
        }
    }
}
