import Foundation
import Logging
import MPinCrypto
import MPinJSON
import MPinPOSIX
import MPinWire
#if canImport(Glibc)
import Glibc
#endif

/// Where `link` mode leaves activation messages for an administrator to forward: one JSON
/// object per line, in a file only the server's user can read (the link is a capability).
struct MailSpool: Sendable {
    let path: String
    /// Says why the spool is refused (its path and mode; never a message's content).
    let logger: Logger

    private struct Message: Encodable {
        var to: String
        var subject: String
        var link: String
        var expires: String
        /// Which registration the link activates, and who started it (docs/SECURITY.md §6.13:
        /// anyone can start a registration for the user, and its mail looked like the user's
        /// own): the fingerprint the user's screen shows while it waits, the device name, the
        /// address.
        var registration: String
        var device: String
        var from: String
    }

    func append(userID: String, mpinIDHex: String, activateKey: String, expires: Date, base: String,
                details: RegistrationDetails) throws(ServerError) {
        let link = base + "/mpinActivate?" + FormEncoding.encode([
            ("i", mpinIDHex), ("e", WireTime.signatureExpires(expires)), ("s", activateKey)])
        let fingerprint = MPinIdentity.fingerprint(mpinIdHex: mpinIDHex) ?? ""
        let message = Message(to: userID, subject: "Activate your M-Pin identity", link: link,
                              expires: WireTime.signatureExpires(expires), registration: fingerprint,
                              device: details.deviceName, from: details.source)
        guard var line = try? JSONEncoding.encode(message) else { throw ServerError.internal("Spool failure") }
        line.append(0x0A)
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw refused("cannot open it: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        // Activation links are secrets: never append them to a file others can read.
        let status = FileStatus(descriptor: fd)
        guard let status, status.isRegularFile, status.mode & 0o077 == 0, status.owner == geteuid() else {
            throw refused("it must be a regular file of the server's user with mode 0600 (mode "
                          + String((status?.mode ?? 0) & 0o777, radix: 8) + ")")
        }
        let written = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == line.count else { throw refused("a write was cut short") }
    }

    private func refused(_ reason: String) -> ServerError {
        logger.error("mail spool refused", metadata: ["path": "\(path)", "reason": "\(reason)"])
        return ServerError.unavailable("Spool unavailable")
    }
}
