// PlainHTTPTransport's keep-alive slot: at most one parked connection per transport.

#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A parked keep-alive socket, the origin it is connected to and the process that opened it.
final class IdleConnection: Sendable {
    private let slot = Mutex((socket: Int32(-1), origin: "", owner: getpid()))

    /// The parked socket if it is connected to `origin`, still open at the other end, and this
    /// process's own; nil otherwise (a socket that fails those checks is closed).
    func take(origin wanted: String) -> Int32? {
        let (candidate, inherited, matches): (Int32, Bool, Bool) = slot.withLock { s in
            defer { s = (-1, "", getpid()) }
            return (s.socket, s.owner != getpid(), s.origin == wanted)
        }
        // A forked child forgets the parent's connection without closing it: by now the child
        // may have closed that descriptor and reused its number for something of its own (the
        // copy is close-on-exec, so at worst it stays open until the child exits or execs).
        guard candidate >= 0, !inherited else { return nil }
        // Readable while idle means closed by the server (or stray bytes): drop it.
        var entry = pollfd(fd: candidate, events: Int16(POLLIN), revents: 0)
        guard matches, poll(&entry, 1, 0) == 0 else {
            close(candidate)
            return nil
        }
        return candidate
    }

    /// Parks `socket`; closes it if another one is already parked.
    func put(_ candidate: Int32, origin parked: String) {
        let stored: Bool = slot.withLock { s in
            guard s.socket < 0, s.owner == getpid() else { return false }
            s = (candidate, parked, s.owner)
            return true
        }
        if !stored { close(candidate) }
    }

    deinit {
        let (socket, owner) = slot.withLock { ($0.socket, $0.owner) }
        if socket >= 0, owner == getpid() { close(socket) }
    }
}
