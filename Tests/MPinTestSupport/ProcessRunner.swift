import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What one run of a command left behind.
package struct ProcessResult: Sendable {
    package let status: Int32
    package let stdout: String
    /// Empty when the run merged standard error into `stdout`.
    package let stderr: String
    package var lines: [String] { stdout.split(separator: "\n").map(String.init) }
}

/// Runs `executable` with `arguments`, `input` on its stdin (else /dev/null), waits for it and
/// returns its status and output; with `mergingStandardError`, stderr goes into `stdout` in the
/// order written. Input and output go through files in a private directory removed afterwards:
/// a chatty command cannot block on a full pipe, and one that exits without reading its input
/// cannot raise SIGPIPE here. Runs from `/`, so that the caller's working directory (the
/// checkout) does not matter.
package func runProcess(_ executable: String, _ arguments: [String], input: String? = nil,
                       mergingStandardError: Bool = false) throws -> ProcessResult {
    let scratch = try PrivateDirectory("mpin-run")
    defer { scratch.remove() }
    let outPath = try scratch.write("out", ""), errPath = try scratch.write("err", "")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.currentDirectoryURL = URL(fileURLWithPath: "/")
    let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
    let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
    defer { try? out.close(); try? err.close() }
    process.standardOutput = out
    // One handle for both shares one file offset, so the two streams interleave as written.
    process.standardError = mergingStandardError ? out : err
    var stdin = FileHandle.nullDevice
    if let input { stdin = try FileHandle(forReadingFrom: URL(fileURLWithPath: try scratch.write("in", input))) }
    defer { if input != nil { try? stdin.close() } }
    process.standardInput = stdin
    try process.run()
    process.waitUntilExit()
    return ProcessResult(status: process.terminationStatus,
                         stdout: (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "",
                         stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")
}
