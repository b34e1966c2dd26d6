import Foundation
import MPinTestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// mpin-server as a systemd service: the unit in Config/ passes `systemd-analyze verify`, and
/// the server tells `$NOTIFY_SOCKET` it is ready (the unit's Type=notify) once it listens.
final class ServiceUnitTests: XCTestCase {
    private var binary: String {
        get throws {
            let dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            for candidate in [dir, dir.deletingLastPathComponent()] {
                let url = candidate.appendingPathComponent("mpin-server")
                if FileManager.default.isExecutableFile(atPath: url.path) { return url.path }
            }
            XCTFail("mpin-server binary not next to the test bundle (\(dir.path))")
            throw CocoaError(.fileNoSuchFile)
        }
    }

    private var scratch = ""
    override func setUpWithError() throws {
        scratch = NSTemporaryDirectory() + "mpin-unit-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o700])
    }
    override func tearDown() { try? FileManager.default.removeItem(atPath: scratch) }

    /// `systemd-analyze verify` (make deps installs systemd for it; no running systemd is
    /// needed) accepts the unit without a warning, with ExecStart pointing at the built binary.
    func testUnitVerifies() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let unit = try String(contentsOf: root.appendingPathComponent("Config/mpin-server.service"), encoding: .utf8)
        XCTAssertTrue(unit.contains("Type=notify"))
        XCTAssertTrue(unit.contains("ProtectSystem=strict"))
        let path = scratch + "/mpin-server.service"
        try unit.replacingOccurrences(of: "/usr/local/bin/mpin-server", with: try binary)
            .write(toFile: path, atomically: true, encoding: .utf8)
        let (status, output) = try run("/usr/bin/systemd-analyze", ["verify", "--man=no", path])
        XCTAssertEqual(status, 0, output)
        XCTAssertEqual(output, "", "systemd-analyze warns")
    }

    /// READY=1 arrives on the notify socket after the server listens, for a path and for an
    /// abstract (`@`) socket.
    func testReadinessReachesTheNotifySocket() throws {
        let data = scratch + "/data"
        XCTAssertEqual(try run(try binary, ["init", "--data", data, "--auto-activate"]).status, 0)
        for abstract in [false, true] {
            let name = abstract ? "@mpin-notify-\(getpid())-\(UUID().uuidString.prefix(8))" : scratch + "/notify"
            let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
            XCTAssertGreaterThanOrEqual(fd, 0)
            defer { close(fd) }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            var bytes = Array(name.utf8)
            if abstract { bytes[0] = 0 }
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
            let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
            }
            XCTAssertEqual(bound, 0, "bind: errno \(errno)")
            var timeout = timeval(tv_sec: 30, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))

            let server = Process()
            server.executableURL = URL(fileURLWithPath: try binary)
            server.arguments = ["serve", "--data", data, "--host", "127.0.0.1", "--port", "0"]
            server.environment = ["NOTIFY_SOCKET": name, "PATH": "/usr/bin:/bin"]
            server.standardOutput = FileHandle.nullDevice
            server.standardError = FileHandle.nullDevice
            try server.run()
            var buffer = [UInt8](repeating: 0, count: 256)
            let n = recv(fd, &buffer, buffer.count, 0)
            server.terminate()
            server.waitUntilExit()
            XCTAssertGreaterThan(n, 0, "no notification (errno \(errno))")
            XCTAssertEqual(String(decoding: buffer.prefix(max(n, 0)), as: UTF8.self), "READY=1")
        }
    }

    /// The status and the output (stdout and stderr together) of one run.
    private func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let result = try runProcess(executable, arguments, mergingStandardError: true)
        return (result.status, result.stdout)
    }
}
