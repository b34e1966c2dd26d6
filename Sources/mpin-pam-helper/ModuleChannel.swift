import CPAMProtocol
import MPinCrypto
import MPinPOSIX
#if canImport(Glibc)
import Glibc
#endif

/// The helper's end of the socket pam_mpin.so gives it as file descriptor 0. The frames are
/// described in Sources/CPAMProtocol/mpin_pam_protocol.h. I/O blocks: the helper is one
/// thread doing one call, and the module stops it if it stays silent past its budget (a
/// resident child, which nobody kills, stops itself: ResidentChildBudget).
struct ModuleChannel {
    /// What the module asked for, the flags libpam gave the call (PAM_SILENT and the like),
    /// and the pam.d line's arguments.
    struct Start {
        var call: UInt8
        var flags: Int32
        var arguments: [String]
    }

    let fd: Int32

    /// The channel on `fd`, if `fd` is a socket (run from a terminal, the helper refuses).
    init?(fd: Int32 = 0) {
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFSOCK else { return nil }
        self.fd = fd
    }

    /// The START frame: the call byte, the flags (4 bytes big-endian), the arguments.
    func readStart() -> Start? {
        guard var frame = receive(), frame.type == UInt8(MPIN_PAM_FRAME_START),
              frame.payload.count >= 1 + Int(MPIN_PAM_FLAGS_SIZE) else { return nil }
        defer { frame.payload.wipe() }
        let p = frame.payload
        let flags = UInt32(p[1]) << 24 | UInt32(p[2]) << 16 | UInt32(p[3]) << 8 | UInt32(p[4])
        let arguments = p.dropFirst(1 + Int(MPIN_PAM_FLAGS_SIZE)).split(separator: 0, omittingEmptySubsequences: false).dropLast()
        return Start(call: p[0], flags: Int32(bitPattern: flags), arguments: arguments.map { String(decoding: $0, as: UTF8.self) })
    }

    /// Asks through the conversation; the answer (to a prompt) comes back as a secret, because
    /// it may be a PIN.
    func converse(style: Int32, _ text: String) -> SecretBytes? {
        var failed = false
        return converse(style: style, text, conversationFailed: &failed)
    }

    /// The same, telling a failed conversation apart from no answer: `conversationFailed` is
    /// set when the application has no conversation, or it failed (sudo -n): nobody can be
    /// asked (pam_mpin(8), PAM RETURN CODES).
    func converse(style: Int32, _ text: String, conversationFailed: inout Bool) -> SecretBytes? {
        send(UInt8(MPIN_PAM_FRAME_CONVERSE), [UInt8(style)] + Array(text.utf8.prefix(Int(MPIN_PAM_MAX_PAYLOAD) - 1)))
        guard style == PAM_PROMPT_ECHO_OFF || style == PAM_PROMPT_ECHO_ON else { return nil }
        var status: UInt8 = 0
        let answer = reply(status: &status)
        conversationFailed = status == UInt8(MPIN_PAM_CONVERSATION_FAILED)
        return answer
    }

    /// A PAM item: PAM_USER (pam_get_user), PAM_SERVICE, PAM_RHOST, PAM_TTY or PAM_AUTHTOK.
    func item(_ type: Int32) -> SecretBytes? {
        send(UInt8(MPIN_PAM_FRAME_GET_ITEM), [UInt8(type)])
        return reply()
    }

    func log(priority: Int32, _ line: String) {
        send(UInt8(MPIN_PAM_FRAME_LOG), [UInt8(priority)] + Array(line.utf8.prefix(Int(MPIN_PAM_MAX_PAYLOAD) - 1)))
    }

    /// From now on, the module allows this long without a frame before it stops the helper.
    func watchdog(milliseconds: UInt32) {
        let ms = min(milliseconds, UInt32(MPIN_PAM_MAX_WATCHDOG_MS))
        ResidentChildBudget.allow(milliseconds: ms)
        send(UInt8(MPIN_PAM_FRAME_WATCHDOG), [UInt8(ms >> 24), UInt8(ms >> 16 & 0xFF), UInt8(ms >> 8 & 0xFF), UInt8(ms & 0xFF)])
    }

    /// The PAM return code; the last frame.
    func result(_ code: Int32) {
        send(UInt8(MPIN_PAM_FRAME_RESULT), [UInt8(code)])
    }

    // MARK: Frames

    private struct Frame {
        var type: UInt8
        var payload: [UInt8]
    }

    /// The answer to CONVERSE or GET_ITEM; nil for no answer. A broken channel ends the helper:
    /// the module is gone or has given up, so there is no one left to answer.
    private func reply() -> SecretBytes? {
        var status: UInt8 = 0
        return reply(status: &status)
    }

    /// The same, with the REPLY's status byte.
    private func reply(status: inout UInt8) -> SecretBytes? {
        // The user's time to answer is not the helper's: a resident child's own clock stops.
        ResidentChildBudget.pause()
        let received = receive()
        ResidentChildBudget.resume()
        guard var frame = received, frame.type == UInt8(MPIN_PAM_FRAME_REPLY), let first = frame.payload.first else { exit(1) }
        defer { frame.payload.wipe() }
        status = first
        guard first == UInt8(MPIN_PAM_ANSWERED) else { return nil }
        return SecretBytes(copying: frame.payload.dropFirst())
    }

    private func send(_ type: UInt8, _ payload: [UInt8]) {
        let count = UInt32(payload.count)
        let frame = [type, UInt8(count >> 24), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)] + payload
        do {
            try sendAll(fd, frame, flags: Int32(MSG_NOSIGNAL))
        } catch {
            exit(1)
        }
    }

    private func receive() -> Frame? {
        var header = [UInt8](repeating: 0, count: Int(MPIN_PAM_HEADER_SIZE))
        guard (try? readExactly(fd, into: &header)) == true else { return nil }
        let count = Int(header[1]) << 24 | Int(header[2]) << 16 | Int(header[3]) << 8 | Int(header[4])
        guard count <= Int(MPIN_PAM_MAX_PAYLOAD) else { return nil }
        var payload = [UInt8](repeating: 0, count: count)
        guard (try? readExactly(fd, into: &payload)) == true else { payload.wipe(); return nil }
        return Frame(type: header[0], payload: payload)
    }
}
