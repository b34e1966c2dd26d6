// Keeps secrets (PINs, tokens, client secrets) out of core files and away from debuggers of
// the same user (issue 24, finding 11). Applied to the whole process, at its start: the
// secret buffers themselves (MPinCrypto.SecretBytes, Swift arrays the runtime may move or copy)
// cannot be locked or excluded from dumps one by one, so no dump of the process is made at all.

import CProcessControl
#if canImport(Glibc)
import Glibc
#endif

public enum ProcessHardening {
    /// What `apply()` could not do, one entry per failed step (empty when all held).
    public struct Failure: Error, Equatable, Sendable {
        public let steps: [String]
    }

    /// `prctl(PR_SET_DUMPABLE, 0)`: the kernel writes no core file (with the default
    /// fs.suid_dumpable = 0), and processes of the same user may not ptrace this one or read
    /// its /proc/PID/mem, environ or maps; and `setrlimit(RLIMIT_CORE, 0)`, soft and hard, which
    /// also covers a kernel whose suid_dumpable asks for dumps of such processes. Neither can
    /// be undone by an unprivileged process (the hard limit only goes down). Returns the steps
    /// that failed; the process goes on either way (nothing here may stop a login).
    @discardableResult
    public static func apply() -> Failure? {
        var failed: [String] = []
        if mpin_set_dumpable(0) != 0 { failed.append("prctl(PR_SET_DUMPABLE, 0): errno \(errno)") }
        var none = rlimit(rlim_cur: 0, rlim_max: 0)
        if setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &none) != 0 {
            failed.append("setrlimit(RLIMIT_CORE, 0): errno \(errno)")
        }
        return failed.isEmpty ? nil : Failure(steps: failed)
    }

    /// Whether this process is dumpable now (`prctl(PR_GET_DUMPABLE)` is not 0).
    public static var isDumpable: Bool { mpin_get_dumpable() != 0 }

    /// The soft and hard RLIMIT_CORE of this process, in bytes.
    public static var coreLimit: (soft: UInt64, hard: UInt64) {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &limit) == 0 else { return (.max, .max) }
        return (UInt64(limit.rlim_cur), UInt64(limit.rlim_max))
    }
}
