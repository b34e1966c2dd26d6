import MPinCLI
import MPinClient
import MPinJSON
import MPinLinux
import MPinLogin

/// `mpinctl doctor`'s look at every registration in the store: what makes a login fail, or
/// hand one to the wrong account, while the rest of the host looks healthy. One line each, and
/// one FAIL line per problem with its fix.
struct RegistrationCheck {
    let config: LoginConfig
    let platform: LinuxPlatform
    let sdk: MPinSDK

    /// What a registration's backend announces, fetched once per backend: its verdict key, or
    /// why it could not be asked.
    private struct Announcement { let verdictKey: String?; let problem: String? }

    func run(report: (Bool, String, String, String) -> Void) {
        let accounts: [(unixUser: String, account: AccountMap.Account)]
        do { accounts = try AccountMap(storage: platform.nonSecureStorage).all() } catch {
            report(false, "registrations", "the account map cannot be read: \(error.description)", "check the store's files (owner root, mode 0600)")
            return
        }
        if accounts.isEmpty { report(true, "registrations", "none in \(config.store)", ""); return }
        var announced: [String: Announcement] = [:]
        var seenIdentities: [String] = []
        for (unixUser, account) in accounts {
            let name = "registration \(unixUser)"
            var problems: [(String, String)] = []
            // The Unix account: a registration outlives a deleted account, and a later account
            // of the same name must not inherit it (the login refuses it; doctor says why).
            switch try? UnixAccount.lookup(unixUser) {
            case nil:
                problems.append(("no Unix account \(unixUser) exists (an orphan: a new account of that name would be asked for this identity)",
                                 "mpinctl delete \(unixUser)"))
            case let unix?:
                if let uid = account.uid, uid != unix.uid {
                    problems.append(("registered for uid \(uid), but \(unixUser) is now uid \(unix.uid) (the account was deleted and its name reused)",
                                     "mpinctl delete \(unixUser), then register the new account if it should use M-Pin"))
                }
            }
            // Its backend is one this host still uses.
            let configured = ([config.backend] + config.backends).filter { !$0.isEmpty }
            if !configured.isEmpty, !configured.contains(where: { $0.trimmingSuffix("/") == account.backend.trimmingSuffix("/") }) {
                problems.append(("its backend \(account.backend) is not in \(config.backend.isEmpty ? "backends" : "backend/backends") of the configuration",
                                 "register again against the current backend (mpinctl delete \(unixUser); mpinctl register \(unixUser) …), or add the old one to `backends`"))
            }
            // The registration in the SDK's store (a token) or a link.
            let user = sdk.listUsers(backend: account.backend).1.first { $0.id == account.identity }
            if !account.linked {
                switch user?.state {
                case .registered?: break
                case .blocked?:
                    problems.append(("the identity \(account.identity) is blocked after wrong PINs",
                                     "on the server: mpin-server user unblock \(account.identity) (the next right PIN clears it here)"))
                case nil:
                    problems.append(("the store holds no token for \(account.identity)", "mpinctl delete \(unixUser), then register again"))
                default:
                    problems.append(("the registration of \(account.identity) is not finished", "mpinctl delete \(unixUser), then register again"))
                }
            }
            if account.revoked {
                problems.append(("the backend answered REVOKED for \(account.identity)",
                                 "if that was meant, mpinctl delete \(unixUser); else re-invite the user on the server and register again"))
            }
            if seenIdentities.contains(account.identity + "\n" + account.backend) {
                problems.append(("another Unix account uses the same identity \(account.identity)", "mpinctl delete one of them"))
            }
            seenIdentities.append(account.identity + "\n" + account.backend)
            // The key the backend announces now against the one pinned at registration.
            let pinned = account.linked ? account.verdictKey : (user?.verdictKeyHex ?? "")
            if !pinned.isEmpty {
                let now = announced[account.backend] ?? announcement(of: account.backend)
                announced[account.backend] = now
                if let key = now.verdictKey, key.lowercased() != pinned.lowercased() {
                    problems.append(("\(account.backend) announces another verdict key than the one pinned at registration (a new server, "
                                     + "or an impostor on its address): every login of \(account.identity) fails",
                                     "if the server was rebuilt on purpose, register again (mpinctl delete \(unixUser); mpinctl register … --verdict-key KEY)"))
                } else if let problem = now.problem {
                    report(true, name, "\(account.identity) on \(account.backend); the backend was not asked (\(problem))", "")
                    for (detail, fix) in problems { report(false, name, detail, fix) }
                    continue
                }
            }
            // Revoked or deleted on the server: the time permit's signed 410 says so without a PIN.
            if let user, user.state == .registered, !account.revoked, !pinned.isEmpty, problems.isEmpty {
                if case .revoked = revocation(of: user, backend: account.backend) {
                    problems.append(("the server says \(account.identity) is revoked (signed)",
                                     "if that was meant, mpinctl delete \(unixUser); else re-invite the user on the server and register again"))
                }
            }
            if problems.isEmpty {
                report(true, name, "\(account.identity) on \(account.backend)\(account.linked ? " (linked, device mode)" : "")", "")
            }
            for (detail, fix) in problems { report(false, name, detail, fix) }
        }
    }

    private func announcement(of backend: String) -> Announcement {
        let probe = MPinSDK(context: platform)
        for d in config.trustedDomains { probe.addTrustedDomain(d) }
        guard probe.initialize().isOK else { return Announcement(verdictKey: nil, problem: "the store could not be read") }
        if !config.authenticatesByTLS(backend) { _ = probe.confine(toOriginOf: backend) }
        let status = probe.setBackend(backend, rpsPrefix: config.rpsPrefix)
        guard status.isOK else { return Announcement(verdictKey: nil, problem: status.description) }
        return Announcement(verdictKey: probe.clientSettingsDocument?["verdictKey"]?.stringValue ?? "", problem: nil)
    }

    private enum Standing { case active, revoked, unknown }

    /// What the backend says of the identity when asked for a time permit (no PIN involved):
    /// a revocation counts only with the pinned key's signature (the SDK checks it).
    private func revocation(of user: MPinUser, backend: String) -> Standing {
        if !config.authenticatesByTLS(backend) { _ = sdk.confine(toOriginOf: backend) }
        guard sdk.setBackend(backend, rpsPrefix: config.rpsPrefix).isOK else { return .unknown }
        let status = sdk.startAuthentication(user)
        if status.code == .revoked { return .revoked }
        return status.isOK ? .active : .unknown
    }
}
