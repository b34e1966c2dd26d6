// PlainHTTPTransport's keep-alive slot: at most one parked connection per transport.

#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A parked keep-alive connection, the origin it is connected to and the process that opened it.
final class IdleConnection: Sendable {
    private let slot = Mutex((connection: HTTPConnection?.none, origin: "", owner: getpid()))

    /// The parked connection if it is connected to `origin`, still open at the other end, and
    /// this process's own; nil otherwise (a connection that fails those checks is closed).
    func take(origin wanted: String) -> HTTPConnection? {
        let (candidate, inherited, matches): (HTTPConnection?, Bool, Bool) = slot.withLock { s in
            defer { s = (nil, "", getpid()) }
            return (s.connection, s.owner != getpid(), s.origin == wanted)
        }
        // A forked child forgets the parent's connection without closing it: by now the child
        // may have closed that descriptor and reused its number for something of its own (the
        // copy is close-on-exec, so at worst it stays open until the child exits or execs), and
        // a TLS session must not be ended from here (close_notify would end the parent's).
        guard let candidate, !inherited else { return nil }
        // Readable while idle means closed by the server (or stray bytes): drop it.
        guard matches, candidate.isUsableAfterIdle else {
            candidate.close()
            return nil
        }
        return candidate
    }

    /// Parks `connection`; closes it if another one is already parked.
    func put(_ candidate: HTTPConnection, origin parked: String) {
        let stored: Bool = slot.withLock { s in
            guard s.connection == nil, s.owner == getpid() else { return false }
            s = (candidate, parked, s.owner)
            return true
        }
        if !stored { candidate.close(notify: true) }
    }

    deinit {
        let (connection, owner) = slot.withLock { ($0.connection, $0.owner) }
        if let connection, owner == getpid() { connection.close(notify: true) }
    }
}
