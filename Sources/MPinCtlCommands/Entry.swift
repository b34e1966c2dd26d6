#if canImport(Glibc)
import Glibc
#endif
import MPinCLI

/// mpinctl: registration and user management for pam_mpin.
var mpinctlCommands: CommandGroup {
    CommandGroup(
        name: "mpinctl",
        abstract: "Manage M-Pin registrations for pam_mpin.",
        discussion: "Exit status: 0 success, 1 the operation failed, 3 configuration error, 4 not root, 5 storage error, 6 backend unavailable, 64 usage error.",
        subcommands: [Register.self, Link.self, PinKey.self, List.self, Show.self, Delete.self, Auth.self, OTP.self, RegCode.self, RegisterDVS.self, Sign.self, Verify.self, Backends.self,
                      HostKey.self, HostCertificateCommand.self, TestBackend.self, Doctor.self, Version.self])
}

/// Global options may come before the subcommand (`mpinctl --config F list`); the parser takes a
/// subcommand's options after its name, so leading ones are moved behind it.
func reorderedArguments(_ args: [String]) -> [String] {
    let withValue: Set<String> = ["--config", "--store"], flags: Set<String> = ["--pin-stdin"]
    var leading: [String] = [], i = 0
    while i < args.count {
        let a = args[i]
        if withValue.contains(a), i + 1 < args.count { leading += [a, args[i + 1]]; i += 2 }
        else if flags.contains(a) || withValue.contains(where: { a.hasPrefix($0 + "=") }) { leading.append(a); i += 1 }
        else { break }
    }
    guard i < args.count else { return args }
    return [args[i]] + leading + args[(i + 1)...]
}

/// What `mpinctl` does: parses the command line (global options may come first) and runs the
/// subcommand; exits with the subcommand's status.
package func mpinctlMain() -> Never {
    prepareProcess(program: "mpinctl")
    let command = mpinctlCommands.parseOrExit(reorderedArguments(Array(CommandLine.arguments.dropFirst())))
    do {
        try command.run()
        exit(ExitStatus.ok.rawValue)
    } catch let error as CLIError {
        printError(error.message)
        exit(error.status.rawValue)
    } catch let error as ExitWithStatus {
        exit(error.status.rawValue)
    } catch {
        printError("\(error)")
        exit(ExitStatus.failed.rawValue)
    }
}
