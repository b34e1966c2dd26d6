import MPinClient

/// Throws for a non-OK status, with the exit status that fits its code.
package func check(_ status: MPinStatus) throws {
    guard !status.isOK else { return }
    let exit: ExitStatus
    switch status.code {
    case .storageError: exit = .storage
    case .networkError, .httpServerError, .untrustedDomainError: exit = .unavailable
    default: exit = .failed
    }
    throw CLIError(status: exit, message: "\(status.code.rawValue): \(status.message)")
}
