// The libcurl handle a CurlHTTPTransport keeps between requests (keep-alive), fork-aware.

import CCurl
import CCurlShim
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The easy handle a transport keeps between requests, with the process that created it. A
/// handle is parked only after a successful request, reset to default options (so it points at
/// nothing of the finished request; `curl_easy_reset` keeps the connection); concurrent
/// requests each get their own handle.
final class IdleHandle: Sendable {
    /// The handle's address (0: none) and the pid that created it.
    private let slot = Mutex((address: UInt(0), owner: getpid()))

    /// The parked handle, if this process owns one.
    func take() -> UnsafeMutableRawPointer? {
        let address: UInt = slot.withLock { s in
            if s.owner != getpid() {
                // A forked child: the handle and its connection belong to the parent. Never use
                // or clean them up (that would end the parent's TLS session), and do not close
                // the socket's descriptor either: the child may have reused that number by now
                // (curl's sockets are close-on-exec). Forget them and start afresh.
                s = (0, getpid())
                return 0
            }
            defer { s.address = 0 }
            return s.address
        }
        return UnsafeMutableRawPointer(bitPattern: address)
    }

    /// Parks `handle` for the next request, or cleans it up if one is already parked.
    func put(_ handle: UnsafeMutableRawPointer) {
        mpin_curl_easy_reset(handle)
        let address = UInt(bitPattern: handle)
        let kept: Bool = slot.withLock { s in
            guard s.owner == getpid(), s.address == 0 else { return false }
            s.address = address
            return true
        }
        if !kept { mpin_curl_easy_cleanup(handle) }
    }

    deinit {
        let s = slot.withLock { $0 }
        if s.owner == getpid(), let handle = UnsafeMutableRawPointer(bitPattern: s.address) { mpin_curl_easy_cleanup(handle) }
    }
}
