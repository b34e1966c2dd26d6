#if canImport(Glibc)
import Glibc
#endif
import MPinPOSIX

/// Writes `program: text` and a newline to stderr, the way both commands report a failure:
/// straight to file descriptor 2, unbuffered.
public func printError(_ text: String, program: String) {
    let line = Array("\(program): \(text)\n".utf8)
    var written = 0
    while written < line.count {
        let n = try? retryingOnInterrupt { line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress! + written, $0.count - written) } }
        guard let n, n > 0 else { return }
        written += n
    }
}
