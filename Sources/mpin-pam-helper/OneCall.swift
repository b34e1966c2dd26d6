import CPAMProtocol
#if canImport(Glibc)
import Glibc
#endif

/// One pam_mpin.so call on the socket that is fd 0: START, the work, RESULT. A spawned helper
/// runs it once (main.swift); a resident one runs it in each forked child, on the accepted
/// connection (ResidentServer). Returns the exit status.
func serveOneCall() -> Int32 {
    guard let channel = ModuleChannel() else {
        let usage = "mpin-pam-helper is run by pam_mpin.so, not by hand (see pam_mpin(8)).\n"
        _ = usage.withCString { write(2, $0, strlen($0)) }
        return 2
    }
    guard let start = channel.readStart() else { return 1 }
    let session = PAMSession(channel: channel, arguments: start.arguments, flags: start.flags)
    switch Int32(start.call) {
    case Int32(MPIN_PAM_CALL_AUTHENTICATE): channel.result(session.authenticate())
    case Int32(MPIN_PAM_CALL_ACCOUNT): channel.result(session.accountStatus())
    case Int32(MPIN_PAM_CALL_CHAUTHTOK): channel.result(session.changePIN())
    default: channel.result(PAM_SERVICE_ERR)
    }
    return 0
}
