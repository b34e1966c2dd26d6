#if canImport(Glibc)
import Glibc
#endif
import MPinPOSIX

/// Writes `program: text` and a newline to stderr, the way both commands report a failure:
/// straight to file descriptor 2, unbuffered.
package func printError(_ text: String, program: String) {
    try? writeAll(STDERR_FILENO, Array("\(program): \(text)\n".utf8))
}
