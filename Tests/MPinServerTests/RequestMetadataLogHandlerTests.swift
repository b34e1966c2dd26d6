import Logging
import MPinServer
import XCTest

/// The handler the server's request loggers go through keeps metadata set on a logger apart
/// from its base handler until a line is logged, and then logs the same metadata as before.
final class RequestMetadataLogHandlerTests: XCTestCase {
    private func logger(_ lines: LogLines, level: Logger.Level = .info) -> Logger {
        var base = CapturingLogHandler(lines: lines)
        base.metadata = ["node": "a"]
        var logger = Logger(label: "test") { _ in RequestMetadataLogHandler(base: base) }
        logger.logLevel = level
        return logger
    }

    func testMetadataSetOnTheLoggerReachesTheLinesLogged() {
        let lines = LogLines()
        var request = logger(lines)
        request[metadataKey: "hb.request.id"] = "17"
        request[metadataKey: "route"] = "/set"
        request.info("request", metadata: ["route": "/own", "status": "200"])
        XCTAssertEqual(lines.all.count, 1)
        // The base's own metadata, the logger's, and the line's own winning over both.
        XCTAssertEqual(lines.all.first?.metadata, ["node": "a", "hb.request.id": "17", "route": "/own", "status": "200"])
        XCTAssertEqual(request[metadataKey: "hb.request.id"], "17")
        XCTAssertEqual(request[metadataKey: "node"], "a")
        XCTAssertEqual(request.handler.metadata, ["node": "a", "hb.request.id": "17", "route": "/set"])
    }

    func testACopyWithMetadataLeavesTheOriginalAlone() {
        let lines = LogLines()
        let server = logger(lines)
        var request = server
        request[metadataKey: "hb.request.id"] = "18"
        server.info("started")
        XCTAssertEqual(lines.all.first?.metadata, ["node": "a"])
    }

    func testTheLevelIsTheBaseHandlers() {
        let lines = LogLines()
        var quiet = logger(lines, level: .critical)
        quiet[metadataKey: "hb.request.id"] = "19"
        quiet.info("not logged")
        quiet.critical("logged")
        XCTAssertEqual(lines.all.map(\.message), ["logged"])
        XCTAssertEqual(quiet.logLevel, .critical)
        XCTAssertEqual((quiet.handler as? RequestMetadataLogHandler)?.base.logLevel, .critical)
    }
}
