import CPAMProtocol
#if canImport(Glibc)
import Glibc
#endif

// mpin-pam-helper: the work of one pam_mpin.so call, in a process of its own (pam_mpin.so,
// Embedded Swift in pam/Module, starts it with a socket as fd 0 and relays the conversation,
// syslog and the result). It prints nothing: stdout and stderr are /dev/null, everything goes
// over the socket.

hardenHelperProcess()
guard let channel = ModuleChannel() else {
    let usage = "mpin-pam-helper is run by pam_mpin.so, not by hand (see pam_mpin(8)).\n"
    _ = usage.withCString { write(2, $0, strlen($0)) }
    exit(2)
}
guard let start = channel.readStart() else { exit(1) }
let session = PAMSession(channel: channel, arguments: start.arguments, flags: start.flags)
switch Int32(start.call) {
case Int32(MPIN_PAM_CALL_AUTHENTICATE): channel.result(session.authenticate())
case Int32(MPIN_PAM_CALL_ACCOUNT): channel.result(session.accountStatus())
default: channel.result(PAM_SERVICE_ERR)
}
exit(0)
