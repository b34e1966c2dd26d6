import CPAMProtocol
import CProcessControl
import CTLSShim
import MPinPOSIX
#if canImport(Glibc)
import Glibc
#endif

/// A resident helper's pre-forked child: it does, before any login, the work every login does
/// that involves no secret and no input (`warm`), then waits in accept() on the shared
/// listening socket, serves exactly one call from a root peer, and exits. The parent forks its
/// replacement after it says it has a call (ResidentServer.serve), and learns from it, once the
/// call is over, whether the login used https (the pid negated on the same pipe).
///
/// The idle children wait in a blocking accept() on the same listening socket (left blocking
/// for them): the kernel wakes one of them per connection (an exclusive wait, no thundering
/// herd) and gives each connection to exactly one accept(), so none is lost or served twice.
enum IdleChild {
    static func run(listener: Int32, taken: Int32, parent: pid_t, warmTLS: Bool) -> Never {
        for number in 1..<Int32(65) where number != SIGKILL && number != SIGSTOP {
            signal(number, SIG_DFL)
        }
        var none = sigset_t()
        sigemptyset(&none)
        sigprocmask(SIG_SETMASK, &none, nil)
        // Stopping the daemon ends its idle children (a busy one finishes its call, within its
        // budget); a parent that ended before this line is caught by the check after it.
        _ = mpin_set_parent_death_signal(SIGKILL)
        if getppid() != parent { _exit(0) }
        warm(tls: warmTLS)
        while true {
            let connection = accept(listener, nil, nil)  // blocking (Linux does not pass O_NONBLOCK on); nothing is ever exec'd
            guard connection >= 0 else {
                // EMFILE and the like: a pause, not a spin.
                if errno != EAGAIN && errno != EINTR && errno != ECONNABORTED { usleep(10_000) }
                continue
            }
            // Before a byte is read: only root (pam_mpin.so) is served. A refused peer learns
            // nothing, and this child, which holds nothing of anyone's, keeps waiting.
            let peer = ResidentServer.peerUID(connection)
            guard peer == 0 else {
                ResidentServer.log(LOG_WARNING, peer < 0 ? "refused a connection whose peer cannot be identified"
                    : "refused a connection from uid \(peer): only root (pam_mpin.so) is served")
                close(connection)
                continue
            }
            serve(connection: connection, listener: listener, taken: taken)
        }
    }

    /// What every login would do first and that depends on no one's input, done while no login
    /// waits. Each child serves one login, so nothing made here is shared between logins:
    /// - the name service's modules (nsswitch.conf, libnss_*.so) loaded by a lookup of a fixed
    ///   account, uid 0; a connection such a module keeps (sssd's socket) is this child's own;
    /// - for https, the SSL_CTX of the settings that depend on no configuration (TLS 1.2 or
    ///   later, peer verification on: OpenSSL 3's algorithm fetches); the login loads the CAs
    ///   its configuration names into it, as into a new one; only while recent logins used
    ///   https (`tls`, ResidentServer.tlsWarmWindow), since an http login never takes it;
    /// - the memory lock every login with a PIN takes (ProcessHardening.lockMemory).
    /// The configuration and the store are read at the call, as they may change between logins.
    private static func warm(tls: Bool) {
        _ = getpwuid(0)
        endpwent()
        if tls { _ = mpin_tls_prepare() }
        // The login locks memory before it reads a PIN (lockMemoryForSecrets): mlockall's walk
        // of the mappings, ~0.5 ms of kernel time, is done here instead. With MCL_ONFAULT it
        // breaks no copy-on-write sharing with the parent; a failure is the login's to report
        // (it tries again).
        ProcessHardening.lockMemory()
    }

    /// The one call on `connection`, as a spawned helper runs it, then exit. The parent is told
    /// first (so it forks a replacement while this call runs); the parent-death signal is
    /// cleared, so that a login under way finishes if the daemon is restarted; the child stops
    /// itself past its budget (ResidentChildBudget).
    private static func serve(connection: Int32, listener: Int32, taken: Int32) -> Never {
        var pid = getpid()
        _ = write(taken, &pid, MemoryLayout<pid_t>.size)
        close(listener)
        _ = mpin_set_parent_death_signal(0)
        guard dup2(connection, 0) == 0 else { _exit(1) }
        if connection != 0 { close(connection) }
        // stdout and stderr as a spawned helper has them (/dev/null), not the daemon's journal:
        // nothing a call does is written anywhere but through the module.
        let null = open("/dev/null", O_RDWR)
        if null >= 0 {
            _ = dup2(null, 1)
            _ = dup2(null, 2)
            if null > 2 { close(null) }
        }
        ResidentChildBudget.start()
        let status = serveOneCall()
        // Whether this login used https, for the next children's warm-up: the pid negated.
        // Nothing of the login's but that one bit reaches the parent.
        if mpin_tls_was_opened() != 0 {
            var used = -pid
            _ = write(taken, &used, MemoryLayout<pid_t>.size)
        }
        _exit(status)
    }
}

/// The resident parent's view of its children: the idle ones by pid, the busy ones counted.
struct ChildPool {
    var idle: [pid_t] = []
    var busy = 0

    var count: Int { idle.count + busy }

    /// `taken`: children that said they have a call; `ended`: children reaped. Returns how many
    /// ended while idle (a child that failed before any call).
    mutating func update(taken: [pid_t], ended: [pid_t]) -> Int {
        for child in taken {
            if let index = idle.firstIndex(of: child) {
                idle.remove(at: index)
                busy += 1
            }
        }
        var idleEnded = 0
        for child in ended {
            if let index = idle.firstIndex(of: child) {
                idle.remove(at: index)
                idleEnded += 1
            } else {
                busy = max(0, busy - 1)
            }
        }
        return idleEnded
    }
}
