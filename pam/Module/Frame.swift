// The helper protocol's frames as pam_mpin.so reads them (Sources/CPAMProtocol/
// mpin_pam_protocol.h). Everything the helper sends is checked here before anything else
// uses it: a frame header's length, and a payload's fields against its type. Embedded Swift
// traps on overflow and on an index out of range, and a trap inside sshd or sudo kills the
// host's process; so no value read from the socket is used in arithmetic that can overflow,
// and no byte is read before the length was checked. The fuzz harness `module` (Sources/
// MPinFuzz) compiles this same file and feeds it arbitrary bytes.
#if canImport(CPAMModule)
import CPAMModule
#else
import CPAMProtocol  // the fuzz harness: the protocol's header, and Glibc for LOG_DEBUG
import Glibc
#endif

/// A frame's type and payload length, from its 5-byte header; nil if the length is over the
/// protocol's limit (or fewer than 5 bytes were given).
struct FrameHeader {
    var type: UInt8
    var length: Int

    init?(_ header: UnsafeRawBufferPointer) {
        guard header.count >= Int(MPIN_PAM_HEADER_SIZE) else { return nil }
        var value: UInt32 = 0
        for i in 1..<5 {
            value = value << 8 | UInt32(header.load(fromByteOffset: i, as: UInt8.self))
        }
        guard value <= UInt32(MPIN_PAM_MAX_PAYLOAD) else { return nil }
        type = header.load(fromByteOffset: 0, as: UInt8.self)
        length = Int(value)
    }
}

/// What a frame from the helper asks the module to do. A text (CONVERSE, LOG) is the payload
/// from offset 1 on; the module keeps a NUL after every payload it reads.
enum HelperRequest: Equatable {
    case converse(style: Int32)
    case getItem(Int32)
    case log(priority: Int32)
    case watchdog(milliseconds: UInt32)
    case result(Int32)

    /// The request a frame of `type` with `payload` makes; nil if the frame breaks the protocol
    /// (unknown type, wrong length, a style, item, priority, budget or code out of range).
    init?(type: UInt8, payload: UnsafeRawBufferPointer) {
        let count = payload.count
        guard count >= 1 else { return nil }
        let first = Int32(payload.load(fromByteOffset: 0, as: UInt8.self))
        switch Int32(type) {
        case Int32(MPIN_PAM_FRAME_CONVERSE):
            guard first >= PAM_PROMPT_ECHO_OFF, first <= PAM_TEXT_INFO else { return nil }
            self = .converse(style: first)
        case Int32(MPIN_PAM_FRAME_GET_ITEM):
            guard count == 1 else { return nil }
            switch first {
            case PAM_USER, PAM_SERVICE, PAM_RHOST, PAM_TTY, PAM_AUTHTOK: self = .getItem(first)
            default: return nil
            }
        case Int32(MPIN_PAM_FRAME_LOG):
            guard first <= LOG_DEBUG else { return nil }
            self = .log(priority: first)
        case Int32(MPIN_PAM_FRAME_WATCHDOG):
            guard count == 4 else { return nil }
            var ms: UInt32 = 0
            for i in 0..<4 {
                ms = ms << 8 | UInt32(payload.load(fromByteOffset: i, as: UInt8.self))
            }
            guard ms <= UInt32(MPIN_PAM_MAX_WATCHDOG_MS) else { return nil }
            self = .watchdog(milliseconds: ms)
        case Int32(MPIN_PAM_FRAME_RESULT):
            guard count == 1 else { return nil }
            switch first {
            case PAM_SUCCESS, PAM_AUTH_ERR, PAM_MAXTRIES, PAM_PERM_DENIED, PAM_USER_UNKNOWN, PAM_IGNORE,
                 PAM_AUTHINFO_UNAVAIL, PAM_SERVICE_ERR, PAM_CONV_ERR,
                 PAM_AUTHTOK_ERR, PAM_AUTHTOK_RECOVERY_ERR, PAM_TRY_AGAIN:
                self = .result(first)
            default: return nil
            }
        default:
            return nil
        }
    }
}
