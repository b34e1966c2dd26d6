#if canImport(Glibc)
import Glibc
#endif

/// sshd's effective settings (`sshd -T`) as they matter to pam_mpin: sshd asks PAM only with
/// UsePAM, shows pam_mpin's prompts only through keyboard-interactive, and lets a public key
/// (or host-based or GSSAPI) login skip PAM's auth stack altogether unless AuthenticationMethods
/// requires keyboard-interactive as well.
package struct SSHDCheck: Sendable {
    package struct Result: Equatable, Sendable {
        package let ok: Bool
        package let detail: String
        package let fix: String
    }

    /// `sshd -T` output: lower-case keyword, space, value; a keyword given more than once keeps
    /// every value.
    package let settings: [String: [String]]

    package init(output: String) {
        var settings: [String: [String]] = [:]
        for line in output.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
            guard let key = parts.first else { continue }
            settings[key.lowercased(), default: []].append(parts.count > 1 ? parts[1] : "")
        }
        self.settings = settings
    }

    package func value(_ key: String) -> String? { settings[key]?.first }

    /// Whether root logs in through PAM's auth stack: only with PermitRootLogin yes (with
    /// prohibit-password root may use keys only, which skip the auth stack).
    package var rootUsesPAM: Bool { value("permitrootlogin") == "yes" }

    /// The three checks, in order: UsePAM, KbdInteractiveAuthentication, AuthenticationMethods.
    package var results: [Result] {
        var results: [Result] = []
        let usePAM = value("usepam") == "yes"
        results.append(Result(ok: usePAM, detail: "UsePAM \(value("usepam") ?? "(not shown)")" + (usePAM ? "" : ": sshd never runs pam_mpin"),
                              fix: "set `UsePAM yes` in sshd_config"))
        // OpenSSH 8.7 renamed ChallengeResponseAuthentication; older versions print the old name.
        let keyword = settings["kbdinteractiveauthentication"] != nil ? "KbdInteractiveAuthentication" : "ChallengeResponseAuthentication"
        let kbd = value(keyword.lowercased()) == "yes"
        results.append(Result(ok: kbd, detail: "\(keyword) \(value(keyword.lowercased()) ?? "(not shown)")" + (kbd ? "" : ": pam_mpin's PIN prompt cannot reach the user"),
                              fix: "set `KbdInteractiveAuthentication yes` in sshd_config"))
        let fix = "set `AuthenticationMethods publickey,keyboard-interactive` (a key and the PIN) or `AuthenticationMethods keyboard-interactive` in sshd_config"
        let methods = value("authenticationmethods") ?? "any"
        // Methods that log in without PAM's auth stack.
        var bypassing: [String] = []
        if methods == "any" {
            if value("pubkeyauthentication") == "yes" { bypassing.append("publickey") }
            if value("hostbasedauthentication") == "yes" { bypassing.append("hostbased") }
            if value("gssapiauthentication") == "yes" { bypassing.append("gssapi-with-mic") }
            results.append(Result(ok: bypassing.isEmpty,
                                  detail: "AuthenticationMethods any" + (bypassing.isEmpty ? "" : ": \(bypassing.joined(separator: " or ")) alone logs in without pam_mpin"),
                                  fix: fix))
        } else {
            // Each space-separated list is one way in; each must pass through PAM (keyboard-interactive,
            // or password, which sshd also checks with PAM's auth stack when UsePAM is on).
            let lists = methods.split(separator: " ").map(String.init)
            let skipping = lists.filter { list in
                !list.split(separator: ",").contains { $0.hasPrefix("keyboard-interactive") || $0 == "password" }
            }
            results.append(Result(ok: skipping.isEmpty,
                                  detail: "AuthenticationMethods \(methods)" + (skipping.isEmpty ? "" : ": \(skipping.joined(separator: " and ")) logs in without pam_mpin"),
                                  fix: fix))
        }
        return results
    }

    /// Where sshd is installed, if it is.
    package static func installedSSHD() -> String? {
        ["/usr/sbin/sshd", "/usr/bin/sshd", "/sbin/sshd"].first { access($0, X_OK) == 0 }
    }

    /// `sshd -T` for a root login from localhost (a Match block needs a connection to apply),
    /// with `config` instead of /etc/ssh/sshd_config if given.
    package static func effectiveSettings(sshd: String, config: String?) -> (output: String, status: Int32, error: String) {
        var arguments = ["-T", "-C", "user=root,host=localhost,addr=127.0.0.1"]
        if let config { arguments += ["-f", config] }
        return ChildProcess.run(sshd, arguments)
    }
}
