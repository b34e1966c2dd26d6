package import Logging

/// A log handler that keeps the metadata set on its logger apart from `base`'s and hands it to
/// `base` only with a line actually logged.
///
/// Why: Hummingbird gives every request a logger with its request id set as metadata, and
/// swift-log's `StreamLogHandler` formats its whole metadata into text each time metadata is
/// set, the id's description included: ~1 % of the server's CPU under load, per request,
/// whether or not anything is logged (docs/PERFORMANCE.md §2.2). Here setting metadata is a
/// dictionary write; the lines logged carry the same metadata as before.
package struct RequestMetadataLogHandler: LogHandler {
    package var base: any LogHandler
    /// Metadata set through this handler, merged under a line's own metadata when it is logged.
    private var added: Logger.Metadata = [:]

    package init(base: any LogHandler) { self.base = base }

    package func log(event: LogEvent) {
        guard !added.isEmpty else { return base.log(event: event) }
        var event = event
        event.metadata = added.merging(event.metadata ?? [:]) { _, own in own }
        base.log(event: event)
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { added[key] ?? base[metadataKey: key] }
        set { added[key] = newValue }
    }

    package var metadata: Logger.Metadata {
        get { base.metadata.merging(added) { _, own in own } }
        set {
            added = [:]
            base.metadata = newValue
        }
    }

    package var logLevel: Logger.Level {
        get { base.logLevel }
        set { base.logLevel = newValue }
    }

    package var metadataProvider: Logger.MetadataProvider? {
        get { base.metadataProvider }
        set { base.metadataProvider = newValue }
    }
}

extension Logger {
    /// This logger with metadata set on it (and its copies) kept apart until a line is logged.
    var withRequestMetadataKeptApart: Logger {
        let base = handler
        return Logger(label: label) { _ in RequestMetadataLogHandler(base: base) }
    }
}
