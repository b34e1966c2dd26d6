import Foundation
import MPinTestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

// Running the built executables (mpinctl, mpin-server) as an administrator or a script would,
// in private temporary directories that do not depend on where the package is checked out.

/// An executable of this package built next to the test bundle (`swift build` builds every
/// product with the tests, so its absence is a broken build, not a reason to skip).
func builtExecutable(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws -> URL {
    let dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for candidate in [dir, dir.deletingLastPathComponent()] {
        let url = candidate.appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: url.path) { return url }
    }
    XCTFail("\(name) not built next to the test bundle (\(dir.path))", file: file, line: line)
    throw CocoaError(.fileNoSuchFile)
}

/// A copy of `executable` that another user can run whatever the modes of the directories
/// above the checkout (a home directory is often 0700): in a fresh directory under /tmp that
/// others may pass through but not list or write (0711), the copy itself 0755. The caller
/// removes the directory.
func copyReachableByOthers(_ executable: URL) throws -> (directory: PrivateDirectory, path: String) {
    let directory = try PrivateDirectory("mpin-others")
    do {
        guard chmod(directory.path, 0o711) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        let copy = directory.appending(executable.lastPathComponent)
        try FileManager.default.copyItem(atPath: executable.path, toPath: copy)
        guard chmod(copy, 0o755) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return (directory, copy)
    } catch {
        directory.remove()
        throw error
    }
}

/// A port on 127.0.0.1 that nothing listens on (bound, then released).
func closedLocalPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw POSIXError(.EMFILE) }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    guard bound else { throw POSIXError(.EADDRINUSE) }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// The built mpin-server on 127.0.0.1 with a fresh data directory and auto-activation.
final class LocalServer {
    let url: String
    /// The key `init` printed, which hosts pin (over plain http mpinctl registers nobody without it).
    let verdictKey: String
    private let process: Process
    private let log: FileHandle

    /// Initialises `directory`/server and serves it on a port the kernel picks, read from the
    /// server's ready line.
    init(in directory: PrivateDirectory) throws {
        let binary = try builtExecutable("mpin-server").path
        let data = directory.appending("server")
        let initialised = try runProcess(binary, ["init", "--data", data, "--auto-activate"])
        guard initialised.status == 0 else {
            throw SetupFailure("mpin-server init failed: \(initialised.stderr)")
        }
        guard let keyLine = initialised.lines.first(where: { $0.hasPrefix("verdict key ") }) else {
            throw SetupFailure("mpin-server init printed no verdict key: \(initialised.stdout)")
        }
        verdictKey = String(keyLine.dropFirst("verdict key ".count))
        let logPath = try directory.write("server.log", "")
        log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["serve", "--data", data, "--host", "127.0.0.1", "--port", "0"]
        process.currentDirectoryURL = URL(fileURLWithPath: "/")
        process.standardOutput = log
        process.standardError = log
        try process.run()
        let deadline = Date().addingTimeInterval(20)
        var found: String? = nil
        while found == nil, process.isRunning, Date() < deadline {
            let logged = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            if let line = logged.split(separator: "\n").first(where: { $0.contains("mpin-server ready") }),
               let start = line.range(of: "http://127.0.0.1:") {
                found = "http://127.0.0.1:" + line[start.upperBound...].prefix { $0.isNumber }
            } else {
                usleep(50_000)
            }
        }
        guard let found else {
            let logged = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            try? log.close()
            throw SetupFailure("mpin-server did not report ready: \(logged)")
        }
        url = found
    }

    /// SIGTERM, then at most 10 s for a clean exit before SIGKILL.
    func stop() {
        if process.isRunning {
            process.terminate()
            let deadline = Date().addingTimeInterval(10)
            while process.isRunning, Date() < deadline { usleep(20_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        process.waitUntilExit()
        try? log.close()
    }
}

/// A test fixture that could not be set up, saying why.
struct SetupFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
