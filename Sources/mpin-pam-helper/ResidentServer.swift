import CPAMProtocol
import CProcessControl
import CTLSShim
import MPinPOSIX
#if canImport(Glibc)
import Glibc
#endif

/// `mpin-pam-helper --serve [--listen PATH]`: the helper stays resident, so that a login as
/// root costs pam_mpin.so a connect instead of a process start (the dynamic loader, the Swift
/// runtime's start, libssl's load: 1.5–2.5 ms of CPU each time). The listening socket comes
/// from systemd (mpin-pam-helper.socket, LISTEN_FDS) or, with --listen, is bound here.
///
/// The trust argument (docs/DESIGN.md): only a root peer is served, by SO_PEERCRED, so a local
/// user never gets an oracle that answers with root's store and keys; every call runs in a
/// child of its own, forked before the call came (IdleChild: pre-forked and warmed with
/// nothing secret, it accepts one root connection, serves it and exits), so one login's memory
/// (a PIN, a token) never serves another, and a child that crashes or hangs costs one call. The process stays
/// single-threaded: fork is safe, and the randomness is the kernel's (SystemRandom reads
/// getentropy on every call; OpenSSL 3 reseeds after a fork), so no child inherits a buffer
/// of random bytes another child also has.
enum ResidentServer {
    /// The most children at once; over it a connection is closed unserved and pam_mpin.so falls
    /// back to running the helper itself.
    static let maximumChildren = 64

    static func run(arguments: [String]) -> Int32 {
        // pam_mpin.so checks who listens on the socket (SO_PEERCRED), which for a socket systemd
        // made is systemd, not this process: a resident helper that is not root (a drop-in's
        // User=) must not serve at all.
        guard geteuid() == 0 else {
            complain("--serve runs as root only (it reads root's store for root's logins)")
            return 1
        }
        let listener: Int32
        switch arguments.count {
        case 0:
            guard let inherited = socketFromSystemd() else {
                complain("no listening socket: run by systemd (mpin-pam-helper.socket) or with --listen PATH")
                return 2
            }
            listener = inherited
        case 2 where arguments[0] == "--listen" && arguments[1].hasPrefix("/"):
            guard let bound = bind(path: arguments[1]) else { return 1 }
            listener = bound
        default:
            complain("usage: mpin-pam-helper --serve [--listen /ABSOLUTE/PATH]")
            return 2
        }
        "mpin-pam-helper".withCString { openlog(strdup($0), LOG_PID, LOG_AUTHPRIV) }
        // What every https login would load: libssl and libcrypto, and OpenSSL's configuration.
        // Secret-free, and the children inherit it instead of loading it each time.
        _ = mpin_tls_available()
        serve(listener)
    }

    // MARK: The loop

    /// Children kept forked, warmed and waiting in accept() (IdleChild): a login finds one
    /// ready, and the parent forks its replacement while the login runs.
    static let idleChildren = 2

    /// Milliseconds between a child's end and the fork of its replacement.
    static let refillDelay = 100

    /// How long after the last login over https new children still make its SSL_CTX while idle
    /// (IdleChild.warm): on a host whose logins are all over http, none does (1.3-2 ms of CPU
    /// per login saved); after a quiet spell the first https login makes its own.
    static let tlsWarmWindow = 600_000

    private static func monotonicMilliseconds() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return now.tv_sec * 1000 + now.tv_nsec / 1_000_000
    }

    /// The parent never accepts a login itself: it keeps up to `idleChildren` children waiting
    /// on the listening socket, learns from the `taken` pipe (each child writes its pid once it
    /// has accepted a root peer) which ones are busy, forks replacements, and reaps. All children,
    /// idle and busy, count against `maximumChildren`; at the cap, with none idle, the parent
    /// accepts and closes, so that pam_mpin.so runs the helper itself instead of waiting.
    private static func serve(_ listener: Int32) -> Never {
        // A child's end interrupts poll, so it is reaped at once (no SA_RESTART).
        var wake = sigaction()
        wake.__sigaction_handler.sa_handler = { _ in }
        sigemptyset(&wake.sa_mask)
        wake.sa_flags = SA_NOCLDSTOP
        sigaction(SIGCHLD, &wake, nil)
        signal(SIGPIPE, SIG_IGN)
        var taken: [Int32] = [-1, -1]
        // (pipe2 is glibc's only under _GNU_SOURCE.) Non-blocking both ways: the parent drains
        // it, and a child's 4-byte write never waits.
        guard pipe(&taken) == 0, taken.allSatisfy({ fcntl($0, F_SETFD, FD_CLOEXEC) == 0 && fcntl($0, F_SETFL, O_NONBLOCK) == 0 }) else {
            log(LOG_ERR, "pipe: errno \(errno); not serving")
            exit(1)
        }
        let parent = getpid()
        var pool = ChildPool()
        var refillAt: Int?  // when the idle children are topped up again (monotonic ms)
        var lastTLSLogin: Int?  // when a child last said its login used https (monotonic ms)
        while true {
            // Reaped first, then the pipe read: a child writes its pid before it can end, so
            // every child reaped here that took a call has said so by now.
            let ended = reapEnded()
            let (takenNow, usedTLS) = readTaken(taken[0])
            if usedTLS { lastTLSLogin = monotonicMilliseconds() }
            let idleEnded = pool.update(taken: takenNow, ended: ended)
            if idleEnded > 0 {
                log(LOG_ERR, "an idle child ended before serving a call")
                usleep(200_000)  // a replacement that fails the same way does not spin
            }
            // Replacements are forked `refillDelay` ms after a child took a call or ended, or at
            // once when no child is left idle (logins arriving together): a fork and a warm-up
            // running while a login is under way would take the CPU it waits for
            // (docs/PERFORMANCE.md §2.3).
            let now = monotonicMilliseconds()
            if (!ended.isEmpty || !takenNow.isEmpty) && refillAt == nil { refillAt = now + refillDelay }
            if pool.idle.isEmpty || refillAt.map({ now >= $0 }) == true { refillAt = nil }
            let warmTLS = lastTLSLogin.map { now - $0 < tlsWarmWindow } ?? false
            while refillAt == nil && pool.idle.count < idleChildren && pool.count < maximumChildren {
                let child = fork()
                if child == 0 {
                    close(taken[0])
                    IdleChild.run(listener: listener, taken: taken[1], parent: parent, warmTLS: warmTLS)
                }
                guard child > 0 else {
                    log(LOG_ERR, "fork: errno \(errno)")
                    break
                }
                pool.idle.append(child)
            }
            var watched = [pollfd(fd: taken[0], events: Int16(POLLIN), revents: 0),
                           pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
            // The timeout is a backstop: a SIGCHLD that came between reap and poll is seen here.
            let timeout = refillAt.map { Int32(max(0, min(1000, $0 - now))) } ?? 1000
            guard poll(&watched, pool.idle.isEmpty ? 2 : 1, timeout) > 0,
                  pool.idle.isEmpty, watched[1].revents != 0 else { continue }
            // No child is idle, so none competes for the waiting connection: accept does not block.
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else {
                // EMFILE and the like: a pause, not a spin (poll says readable again at once).
                if errno != EAGAIN && errno != EINTR && errno != ECONNABORTED { usleep(10_000) }
                continue
            }
            log(LOG_WARNING, "\(pool.count) logins under way: a connection closed unserved (pam_mpin.so runs the helper itself)")
            close(connection)
        }
    }

    /// The children that ended since the last call, reaped.
    private static func reapEnded() -> [pid_t] {
        var ended: [pid_t] = []
        var status: Int32 = 0
        while true {
            let child = waitpid(-1, &status, WNOHANG)
            guard child > 0 else { return ended }
            ended.append(child)
        }
    }

    /// The pids the children wrote on the `taken` pipe since the last call.
    /// The pids of the children that took a call since the last read, and whether one said its
    /// login used https (it writes its pid negated when the call is over; IdleChild.serve).
    private static func readTaken(_ pipe: Int32) -> (taken: [pid_t], usedTLS: Bool) {
        var pids: [pid_t] = []
        var usedTLS = false
        var buffer = [pid_t](repeating: 0, count: 64)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(pipe, $0.baseAddress, $0.count) }
            guard count > 0 else { return (pids, usedTLS) }
            // Each write is one pid_t, atomic on a pipe (under PIPE_BUF): never split.
            for pid in buffer[0..<(count / MemoryLayout<pid_t>.size)] {
                if pid > 0 { pids.append(pid) } else if pid < 0 { usedTLS = true }
            }
        }
    }

    // MARK: The socket

    /// The uid of the process at the other end of `connection`, as the kernel recorded it at
    /// connect (SO_PEERCRED: nothing the peer says); -1 when it cannot be read. struct ucred is
    /// glibc's only under _GNU_SOURCE, which Swift's Glibc module is not built with: its
    /// layout (pid, uid, gid) is Linux's ABI.
    static func peerUID(_ connection: Int32) -> Int64 {
        var credentials: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)
        var size = socklen_t(MemoryLayout.size(ofValue: credentials))
        guard getsockopt(connection, SOL_SOCKET, SO_PEERCRED, &credentials, &size) == 0,
              Int(size) == MemoryLayout.size(ofValue: credentials) else { return -1 }
        return Int64(credentials.uid)
    }

    /// The one socket systemd passed (LISTEN_PID is this process, LISTEN_FDS is 1: fd 3); the
    /// variables are removed so that nothing this process starts takes them for its own.
    private static func socketFromSystemd() -> Int32? {
        defer { unsetenv("LISTEN_PID"); unsetenv("LISTEN_FDS"); unsetenv("LISTEN_FDNAMES") }
        guard let pid = getenv("LISTEN_PID").map({ String(cString: $0) }), pid == String(getpid()),
              let count = getenv("LISTEN_FDS").map({ String(cString: $0) }), count == "1" else { return nil }
        var st = stat()
        guard fstat(3, &st) == 0, st.st_mode & S_IFMT == S_IFSOCK else { return nil }
        _ = fcntl(3, F_SETFD, FD_CLOEXEC)
        _ = fcntl(3, F_SETFL, fcntl(3, F_GETFL) & ~O_NONBLOCK)  // blocking: see IdleChild
        return 3
    }

    /// A Unix stream socket bound at `path` (a stale socket there is replaced), mode 0600.
    private static func bind(path: String) -> Int32? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            complain("\(path): the path is too long for a Unix socket")
            return nil
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)  // blocking: see IdleChild
        guard fd >= 0 else { complain("socket: errno \(errno)"); return nil }
        var st = stat()
        if lstat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFSOCK { unlink(path) }
        let saved = umask(0o177)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        umask(saved)
        // The umask made it 0600; no chmod by path, which would follow a symbolic link swapped in.
        guard bound == 0, listen(fd, 128) == 0 else {
            complain("\(path): cannot listen: errno \(errno)")
            close(fd)
            return nil
        }
        return fd
    }

    // MARK: Messages

    /// Before the loop (a usage or start-up error): to stderr, which is systemd's journal or
    /// the terminal of whoever started it.
    private static func complain(_ message: String) {
        let line = "mpin-pam-helper: \(message)\n"
        _ = line.withCString { write(2, $0, strlen($0)) }
    }

    static func log(_ priority: Int32, _ line: String) {
        line.withCString { mpin_syslog_line(priority, $0) }
    }
}

/// A resident child's own clock: nobody kills it when pam_mpin.so gives up (the module only
/// closes its end), so it ends itself (SIGALRM, default action) a second after the budget the
/// module allows it: before START the first WATCHDOG's, then each WATCHDOG's. The margin is
/// small so that a child the module has given up on does not go on to a later step of the
/// login (pass 2, the final step), as a spawned helper, killed at the deadline, cannot; it is
/// not smaller because the module also stops its clock while an informational message is
/// shown, which the child does not see. The time waiting for an answer (the user typing a
/// PIN) does not count, as in the module: the timer is stopped then and what was left of the
/// allowance is resumed after it (the module adds the wait to its deadline), and the module's
/// end closing ends that wait.
enum ResidentChildBudget {
    /// Milliseconds past the module's budget before the child stops itself.
    static let marginMilliseconds: UInt32 = 1000
    /// nil in a spawned helper (the module stops it); in a resident child, whether its timer
    /// runs. Set on the process's one thread only.
    nonisolated(unsafe) static var active = false
    /// What was left of the allowance when the timer was stopped for an answer.
    nonisolated(unsafe) static var left = itimerval()

    static func start() {
        active = true
        arm(milliseconds: UInt32(MPIN_PAM_FIRST_WATCHDOG_MS) + marginMilliseconds)
    }

    static func allow(milliseconds allowed: UInt32) {
        guard active else { return }
        arm(milliseconds: allowed.addingReportingOverflow(marginMilliseconds).overflow ? UInt32.max : allowed + marginMilliseconds)
    }

    /// Stops the timer, keeping what was left.
    static func pause() {
        guard active else { return }
        var off = itimerval()
        setitimer(__itimer_which_t(ITIMER_REAL.rawValue), &off, &left)
    }

    /// Starts the timer again with what `pause` kept (at least a millisecond: zero would
    /// leave it off).
    static func resume() {
        guard active else { return }
        var timer = left
        if timer.it_value.tv_sec == 0 && timer.it_value.tv_usec == 0 { timer.it_value.tv_usec = 1000 }
        setitimer(__itimer_which_t(ITIMER_REAL.rawValue), &timer, nil)
    }

    /// ITIMER_REAL, one shot: SIGALRM after `milliseconds`.
    private static func arm(milliseconds: UInt32) {
        var timer = itimerval()
        timer.it_value.tv_sec = Int(milliseconds / 1000)
        timer.it_value.tv_usec = Int(milliseconds % 1000) * 1000
        setitimer(__itimer_which_t(ITIMER_REAL.rawValue), &timer, nil)
    }
}
