#if canImport(Glibc)
import Glibc
#endif
import MPinCLI
import MPinClient

/// mpin: the user's own M-Pin device, no root needed. It holds the user's tokens and approves
/// logins that wait for an access number (pam_mpin's `mode = device`).
var mpinCommands: CommandGroup {
    CommandGroup(
        name: "mpin",
        abstract: "Approve logins from your own device with your M-Pin PIN.",
        discussion: "Exit status: 0 success, 1 the operation failed, 5 storage error, 6 backend unavailable, 64 usage error.",
        subcommands: [Register.self, Approve.self, Refuse.self, List.self, Delete.self, OTP.self])
}

/// What `mpin` does: parses the command line and runs the subcommand; exits with its status.
package func mpinMain() -> Never {
    prepareProcess(program: "mpin")
    let command = mpinCommands.parseOrExit(Array(CommandLine.arguments.dropFirst()))
    do {
        try command.run()
        exit(ExitStatus.ok.rawValue)
    } catch let error as CLIError {
        // A certificate the user's system does not trust is the usual first error against a
        // backend with its own CA: the message names the fix.
        let tls = error.message.hasPrefix("NETWORK_ERROR: TLS failure")
        printError(error.message + (tls ? TLSTrust.advice : ""), program: "mpin")
        exit(error.status.rawValue)
    } catch let error as StorageError {
        printError("STORAGE_ERROR: \(error)", program: "mpin")
        exit(ExitStatus.storage.rawValue)
    } catch let error as ExitWithStatus {
        exit(error.status.rawValue)
    } catch {
        printError("\(error)", program: "mpin")
        exit(ExitStatus.failed.rawValue)
    }
}
