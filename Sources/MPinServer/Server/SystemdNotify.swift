#if canImport(Glibc)
import Glibc
#endif

/// systemd's readiness notification (sd_notify(3)), written out rather than linking libsystemd:
/// one datagram to the socket `$NOTIFY_SOCKET` names. A unit of `Type=notify` counts the
/// service as started only then, so units ordered after mpin-server find it listening.
enum SystemdNotify {
    /// Sends `READY=1` when the service runs under systemd (`NOTIFY_SOCKET` set); does nothing
    /// otherwise, and never fails the server: a lost notification only delays systemd.
    static func ready() { send("READY=1") }

    static func send(_ message: String) {
        guard let path = getenv("NOTIFY_SOCKET").map({ String(cString: $0) }), !path.isEmpty else { return }
        // "@name" is a socket in the abstract namespace: its address starts with a zero byte.
        var bytes = Array(path.utf8)
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 } else if bytes.first != UInt8(ascii: "/") { return }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
        }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                Array(message.utf8).withUnsafeBytes { body in
                    sendto(fd, body.baseAddress, body.count, Int32(MSG_NOSIGNAL), sa, length)
                }
            }
        }
    }
}
