// The one place that retries POSIX calls interrupted by a signal. sshd and sudo install signal
// handlers (SIGCHLD, SIGALRM) while PAM runs, so any blocking call in the module can fail with
// EINTR having done nothing; it must be repeated, not reported.

#if canImport(Glibc)
import Glibc
#endif

/// The errno of a system call that failed for a reason other than EINTR.
package struct SystemCallError: Error, Equatable, Sendable {
    /// The errno value, e.g. `EAGAIN`.
    package let code: Int32

    /// Wraps an errno value.
    package init(code: Int32) { self.code = code }
}

/// Calls `call`, a POSIX function that reports failure by returning -1 and setting errno, again
/// for as long as it fails with EINTR, and returns its first other result. Any other failure is
/// thrown with its errno, read at once (before anything else can overwrite it).
///
/// For calls that can simply be repeated after EINTR: read, write, send, recv, fsync, flock,
/// accept, waitpid, and poll when the closure recomputes the timeout from a deadline. Not for a
/// non-blocking connect, which goes on in the background after EINTR (wait for it with poll).
/// Not `@inlinable`: its body names SystemCallError, a package type, which code inlined into
/// another module may not; a call costs nothing beside the system call it wraps.
package func retryingOnInterrupt<Value: FixedWidthInteger & SignedInteger>(
    _ call: () -> Value
) throws(SystemCallError) -> Value {
    while true {
        let value = call()
        if value != -1 { return value }
        let code = errno
        if code != EINTR { throw SystemCallError(code: code) }
    }
}
