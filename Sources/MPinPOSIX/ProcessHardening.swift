// Keeps secrets (PINs, tokens, client secrets) out of core files, away from debuggers of the
// same user and out of swap (docs/SECURITY.md §6.11). Applied to the whole process, at its start:
// the secret buffers themselves (MPinCrypto.SecretBytes, Swift arrays the runtime may move or
// copy) cannot be locked or excluded from dumps one by one, so no dump of the process is made
// at all (which makes MADV_DONTDUMP moot), and every page it touches is locked in memory.

import CProcessControl
#if canImport(Glibc)
import Glibc
#endif

package enum ProcessHardening {
    /// What `apply()` could not do, one entry per failed step (empty when all held).
    package struct Failure: Error, Equatable, Sendable {
        package let steps: [String]
    }

    /// `prctl(PR_SET_DUMPABLE, 0)`: the kernel writes no core file (with the default
    /// fs.suid_dumpable = 0), and processes of the same user may not ptrace this one or read
    /// its /proc/PID/mem, environ or maps; and `setrlimit(RLIMIT_CORE, 0)`, soft and hard, which
    /// also covers a kernel whose suid_dumpable asks for dumps of such processes. Neither can
    /// be undone by an unprivileged process (the hard limit only goes down). With
    /// `lockingMemory`, then `lockMemory()`. Returns the steps that failed; the process goes on
    /// either way (nothing here may stop a login).
    @discardableResult
    package static func apply(lockingMemory: Bool = true) -> Failure? {
        var failed: [String] = []
        if mpin_set_dumpable(0) != 0 { failed.append("prctl(PR_SET_DUMPABLE, 0): errno \(errno)") }
        var none = rlimit(rlim_cur: 0, rlim_max: 0)
        if setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &none) != 0 {
            failed.append("setrlimit(RLIMIT_CORE, 0): errno \(errno)")
        }
        if lockingMemory, let locking = lockMemory() { failed += locking.steps }
        return failed.isEmpty ? nil : Failure(steps: failed)
    }

    /// When the process holds CAP_IPC_LOCK (root: the helper under sshd or sudo, mpinctl),
    /// every page it has touched or will touch is locked in memory, so a PIN or token is never
    /// written to swap. It costs a few tenths of a millisecond (the locked pages are dearer to
    /// fault and to unmap at exit), so the helper calls it only once a PIN is to be read, not
    /// for users it answers without one. Pages already present are locked too, so a token read
    /// before the call is covered. Without the capability (mpin as its user, a container that
    /// drops it) RLIMIT_MEMLOCK (8 MB at most by default) is far below a Swift program's
    /// mappings, so nothing is locked and that is not a failure.
    @discardableResult
    package static func lockMemory() -> Failure? {
        guard !memoryLocked, mpin_has_ipc_lock() == 1 else { return nil }
        guard mpin_lock_memory() == 0 else {
            return Failure(steps: ["mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT): errno \(errno)"])
        }
        memoryLocked = true
        return nil
    }

    /// Set once `lockMemory()` has succeeded: MCL_FUTURE covers every page touched since, so a
    /// second call (a resident helper's child locks while idle, then the login asks again before
    /// the PIN) would only walk the mappings again (about 0.5 ms of kernel time).
    nonisolated(unsafe) private static var memoryLocked = false

    /// Whether `lockMemory()` would lock anything: the process holds CAP_IPC_LOCK and has not
    /// locked its memory yet.
    package static var wouldLockMemory: Bool { !memoryLocked && mpin_has_ipc_lock() == 1 }

    /// Whether this process is dumpable now (`prctl(PR_GET_DUMPABLE)` is not 0).
    package static var isDumpable: Bool { mpin_get_dumpable() != 0 }

    /// The soft and hard RLIMIT_CORE of this process, in bytes.
    package static var coreLimit: (soft: UInt64, hard: UInt64) {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &limit) == 0 else { return (.max, .max) }
        return (UInt64(limit.rlim_cur), UInt64(limit.rlim_max))
    }
}
