import CPAMProtocol
#if canImport(Glibc)
import Glibc
#endif

// mpin-pam-helper: the work of one pam_mpin.so call, in a process of its own (pam_mpin.so,
// Embedded Swift in pam/Module, starts it with a socket as fd 0 and relays the conversation,
// syslog and the result). It prints nothing: stdout and stderr are /dev/null, everything goes
// over the socket.
//
// With --serve it stays resident instead (ResidentServer.swift): it accepts pam_mpin.so's
// connections on a Unix socket and forks one child per call, which runs the same
// `serveOneCall()` on the accepted connection.

hardenHelperProcess()
let commandLine = Array(CommandLine.arguments.dropFirst())
if commandLine.first == "--serve" {
    exit(ResidentServer.run(arguments: Array(commandLine.dropFirst())))
}
exit(serveOneCall())
