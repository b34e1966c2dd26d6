/// Exit statuses of `mpinctl` and `mpin` (mpinctl(8), README.md). `mpin` runs as the user and
/// has no configuration file, so it never exits with `config` or `notRoot`.
public enum ExitStatus: Int32, Sendable {
    case ok = 0
    /// The operation ran and failed: wrong PIN, blocked, refused by the server, wrong access
    /// number, ...
    case failed = 1
    case config = 3
    case notRoot = 4
    case storage = 5
    case unavailable = 6
}

/// A failure with its exit status; the message goes to stderr with the status name.
public struct CLIError: Error, CustomStringConvertible, Sendable {
    public let status: ExitStatus
    public let message: String
    public var description: String { message }

    public init(status: ExitStatus, message: String) {
        self.status = status
        self.message = message
    }
}
