/// Exit statuses of `mpinctl` and `mpin` (mpinctl(8), README.md). `mpin` runs as the user and
/// has no configuration file, so it never exits with `config` or `notRoot`.
package enum ExitStatus: Int32, Sendable {
    case ok = 0
    /// The operation ran and failed: wrong PIN, blocked, refused by the server, wrong access
    /// number, ...
    case failed = 1
    case config = 3
    case notRoot = 4
    case storage = 5
    case unavailable = 6
    /// The command line is wrong in form (EX_USAGE): unknown option, missing argument, ...
    case usage = 64
}

/// Ends the program with `status` and no further message: what the command had to say, it
/// has printed (`mpinctl doctor`'s report, `mpinctl auth`'s outcome).
package struct ExitWithStatus: Error, Sendable {
    package let status: ExitStatus
    package init(_ status: ExitStatus) { self.status = status }
}

/// A failure with its exit status; the message goes to stderr with the status name.
package struct CLIError: Error, CustomStringConvertible, Sendable {
    package let status: ExitStatus
    package let message: String
    package var description: String { message }

    package init(status: ExitStatus, message: String) {
        self.status = status
        self.message = message
    }
}
