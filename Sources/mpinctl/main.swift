import ArgumentParser
import Foundation

/// mpinctl: registration and user management for pam_mpin.
struct MPinCtl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mpinctl",
        abstract: "Manage M-Pin registrations for pam_mpin.",
        discussion: "Exit status: 0 success, 1 the operation failed, 3 configuration error, 4 not root, 5 storage error, 6 backend unavailable, 64 usage error.",
        subcommands: [Register.self, List.self, Show.self, Delete.self, Auth.self, OTP.self, Backends.self,
                      TestBackend.self, Doctor.self, Version.self])
}

do {
    var command = try MPinCtl.parseAsRoot()
    try command.run()
} catch let error as CLIError {
    printError(error.message)
    exit(error.status.rawValue)
} catch {
    MPinCtl.exit(withError: error)
}
