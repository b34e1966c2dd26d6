#if canImport(Glibc)
import Glibc
#endif
import MPinLinux

/// What `mpinctl` and `mpin` do first, before they can hold a PIN or a token: no core file, no
/// ptrace or /proc/PID/mem access by the same user (docs/SECURITY.md §6.11), and no argument
/// that is not valid UTF-8 (Swift would decode it with replacement characters, and two
/// different names, Latin-1 `jos\xe8` and `jos\xe9`, would become the same text;
/// docs/SECURITY.md §6.4). Exits with the usage status (64) for such an argument.
package func prepareProcess(program: String) {
    if let failure = ProcessHardening.apply() {
        printError("warning: process hardening incomplete: \(failure.steps.joined(separator: "; "))", program: program)
    }
    for i in 1..<Int(CommandLine.argc) {
        guard let arg = CommandLine.unsafeArgv[i] else { continue }
        let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(arg).assumingMemoryBound(to: UInt8.self), count: strlen(arg))
        if String(validating: bytes, as: UTF8.self) == nil {
            printError("argument \(i) is not valid UTF-8", program: program)
            exit(64)
        }
    }
}
