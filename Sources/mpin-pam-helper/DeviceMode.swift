import CPAMProtocol
import MPinClient
import MPinCrypto
import MPinLogin
import MPinWire
#if canImport(Glibc)
import Glibc
#endif

/// `mode = device`: the login is approved on the user's own device (MPinLogin.DeviceLogin).
extension PAMSession {
    func approveOnDevice(config: LoginConfig, user: String, unregistered: EnforcementPolicy.Unregistered,
                         started: MonotonicInstant) -> Int32 {
        var login = DeviceLogin(config: config, platform: platform(config))
        if options.debug { login.note = { debug($0) } }
        let remoteHost = item(PAM_RHOST)
        let description = DeviceLogin.describe(host: hostName(), unixUser: user, service: item(PAM_SERVICE),
                                               remoteHost: remoteHost)
        let (outcome, identity) = login.run(unixUser: user, description: description) { number, text in
            let message = "Approve this login on your device: access number \(DeviceLogin.grouped(number)) (\(text))\n"
                + "On your device run: mpin approve \(number)"
            // sshd's keyboard-interactive passes informational text on only with the next
            // prompt, so a remote login gets the message as a prompt (its answer is ignored);
            // the wait starts once the user has pressed Enter.
            let tty = item(PAM_TTY)
            // With PAM_SILENT no message may be shown, so the number comes as a prompt (prompts
            // still happen) and without the QR code.
            // On a terminal (sudo, login, ssh), the number as a QR code too, for a phone's
            // camera; in messages of at most 5 lines, within PAM's 512-byte message size.
            if !silent, tty.hasPrefix("/dev/") || tty == "ssh", let code = QRCode(digits: number) {
                var lines: [Substring] = code.halfBlocks().split(separator: "\n")
                while !lines.isEmpty {
                    let chunk = lines.prefix(5)
                    lines.removeFirst(chunk.count)
                    var block = ""
                    for (i, line) in chunk.enumerated() { block += (i == 0 ? "" : "\n") + line }
                    tell(PAM_TEXT_INFO, block)
                }
            }
            if !silent && !asksWithPrompt(remoteHost: remoteHost, tty: tty) {
                tell(PAM_TEXT_INFO, message)
            } else if silent && remoteHost.isEmpty && !tty.hasPrefix("/dev/") {
                // PAM_SILENT without a terminal (sudo -n from a script, Ansible's become): a
                // prompt could not be answered, and sudo -n fails a login whose module asked
                // one, whatever the module returns. The number is the one thing the user
                // needs, so it goes out once as an error message, which such callers show,
                // and the wait starts at once (pam_mpin(8), DEVICE MODE).
                debug("PAM_SILENT without a terminal: the number is shown as a message, the login waits for the approval")
                _ = channel.converse(style: PAM_ERROR_MSG, message)
            } else {
                var cannotAsk = false
                _ = channel.converse(style: PAM_PROMPT_ECHO_ON, message + "\nPress Enter once approved: ", conversationFailed: &cannotAsk)
                // The application cannot prompt (sudo -n, no terminal): the number is the one
                // thing the user needs, so it goes out once as an error message, which such
                // callers still show, PAM_SILENT or not; the wait goes on without a prompt.
                if cannotAsk {
                    debug("the conversation cannot prompt; the number is shown as a message, the login waits for the approval")
                    _ = channel.converse(style: PAM_ERROR_MSG, message)
                }
            }
        }
        var code = pamCode(outcome, unregistered: unregistered)
        // A refusal, another identity or no approval in time are authentication failures.
        if case .failed = outcome { code = PAM_AUTH_ERR }
        logOutcome(code, user: user, identity: identity, outcome: outcome, started: started, mode: " mode=device",
                   unregistered: unregistered)
        switch outcome {
        case .success: break
        case .unavailable: tellUnavailable()
        case .unknownUser: break
        default: tell(PAM_ERROR_MSG, "The login was not approved.")
        }
        return code
    }

    /// Whether the message must come as a prompt: a remote login without a terminal device
    /// (sshd sets PAM_RHOST and PAM_TTY "ssh"); sudo and login have a /dev/ terminal.
    func asksWithPrompt(remoteHost: String, tty: String) -> Bool {
        !remoteHost.isEmpty && !tty.hasPrefix("/dev/")
    }

    /// A PAM string item, or "" (PAM_SERVICE, PAM_RHOST, PAM_TTY).
    func item(_ type: Int32) -> String {
        guard let value = channel.item(type) else { return "" }
        return value.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "" }
        return String(cString: buffer)
    }
}
