import ArgumentParser
import Foundation
import Logging
import MPinServer

/// `mpin-server`: the M-Pin backend (RPS, two D-TAs, authentication server) on SQLite or PostgreSQL.
struct MPinServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mpin-server",
        abstract: "Milagro-MFA-compatible M-Pin backend on SQLite or PostgreSQL.",
        subcommands: [Init.self, Serve.self, VerdictKeyCommand.self, HostCommand.self, User.self, App.self, BackupCommand.self,
                      RestoreCommand.self])
}

struct DataOption: ParsableArguments {
    @Option(name: .long, help: "Data directory (config, keys, database).")
    var data: String
}

struct Init: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create the data directory: config, both D-TA master-secret shares, app key, database.")
    @OptionGroup var options: DataOption
    @Flag(name: .long, help: "Activate every registration at once (demo). Default: activation codes.")
    var autoActivate = false
    @Option(name: .long, help: "Identity verification: auto, code (default) or link (activation links in DIR/mail.spool).")
    var verification: String?
    @Option(name: .long, help: "Base URL of activation links (link mode), e.g. http://127.0.0.1:8005.")
    var publicURL: String?
    @Option(name: .long, help: ArgumentHelp(
        "Also write a self-signed certificate for this host name or IP address (DIR/tls.crt, key DIR/tls.key) and serve HTTPS with it.",
        discussion: "On an already initialised directory, only adds the certificate.", valueName: "host"))
    var selfSigned: String?
    @Option(name: .long, help: ArgumentHelp(
        "Keep the server's state in this PostgreSQL database, shared by several nodes, instead of DIR/mpin.sqlite.",
        discussion: "postgresql://USER@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require]; a password, if needed, goes in DIR/database.password (0600). The database must exist; its tables are created now.",
        valueName: "url"))
    var database: String?

    func validate() throws {
        if let database, database != "sqlite", PostgresURL(database) == nil {
            throw ValidationError("--database needs postgresql://USER@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require] (no password in the URL) or sqlite")
        }
        if let host = selfSigned, !SelfSignedCertificate.isValidHost(host) {
            throw ValidationError("--self-signed needs a host name or an IP address, not \(host)")
        }
        if let v = verification, VerificationMode(rawValue: v) == nil {
            throw ValidationError("--verification must be auto, code or link")
        }
        if autoActivate, let v = verification, v != "auto" {
            throw ValidationError("--auto-activate contradicts --verification \(v)")
        }
    }

    func run() async throws {
        do {
            let dir = DataDirectory(path: options.data)
            let onlyCertificate = selfSigned != nil && !autoActivate && verification == nil && publicURL == nil
                && database == nil && (try? dir.loadConfig()) != nil
            if !onlyCertificate {
                try DataDirectory.initialise(path: options.data, autoActivate: autoActivate) { config in
                    if let v = verification.flatMap(VerificationMode.init(rawValue:)) { config.verification = v }
                    config.publicBaseURL = publicURL
                    config.database = database
                }
                if let database, database != "sqlite" {
                    // Connects and creates (or checks) the schema now; makes the ID-token key
                    // now too, so that every node copied from this directory signs with it.
                    do {
                        try await dir.openDatabase().close()
                        try dir.prepareForNodes()
                    } catch {
                        try? dir.removeInitialisedFiles()
                        throw error
                    }
                    print("database \(PostgresURL(database).map(String.init(describing:)) ?? database)")
                }
                print("initialised \(options.data)")
                // Made now, so that the administrator can record it: hosts pin it at registration,
                // and a host that TLS does not tell who the server is (plain http) registers
                // nobody without it (docs/SECURITY.md §3).
                let key = try dir.verdictPublicKey()
                print("verdict key \(key)")
                print("hosts: verdict_key = \(key)  (in /etc/mpin/mpin.conf, or mpinctl register --verdict-key)")
            }
            if let host = selfSigned {
                let certificate = try dir.addSelfSignedCertificate(host: host)
                print("self-signed certificate for \(host): \(certificate)")
                print("clients: backend = https://\(host.contains(":") ? "[\(host)]" : host):PORT, cacert = \(certificate)")
            }
        } catch let e as SetupError {
            throw ValidationError(e.description)
        }
    }
}

/// `mpin-server verdict-key --data DIR`: the public key this server signs login verdicts with
/// (made on first use), for `mpinctl pin-key` on hosts registered before keys were pinned.
struct VerdictKeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verdict-key",
        abstract: "Print the public key this server signs login verdicts with (hosts pin it).")
    @OptionGroup var options: DataOption
    func run() async throws {
        do { print(try DataDirectory(path: options.data).verdictPublicKey()) } catch let e as SetupError {
            throw ValidationError(e.description)
        }
    }
}

/// `mpin-server host certify KEY --data DIR`: a certificate of a host's key for access numbers
/// (PROTOCOL.md §5.8), so that the host's first device login is counted as its own and not in
/// the anonymous bucket (docs/SECURITY.md §5, "Starve a host's device logins").
struct HostCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "host",
        abstract: "Certify a host's key for device-mode access numbers.",
        subcommands: [Certify.self])

    struct Certify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a certificate of a host key (what `mpinctl host-key` prints); give it to `mpinctl host-certificate` on the host.",
            discussion: """
                Without one, a host's requests for access numbers count as anonymous until its first \
                login a device approves, and a flood of anonymous requests can spend that budget. \
                Each approved login renews the certificate.
                """)
        @OptionGroup var options: DataOption
        @Option(name: .long, help: "Days the certificate is good for (1 to 365).") var days = 30
        @Argument(help: "The host's key: 130 hex digits.") var hostKey: String
        func run() async throws {
            do { print(try DataDirectory(path: options.data).certifyHostKey(hostKey, days: days)) } catch let e as SetupError {
                throw ValidationError(e.description)
            }
        }
    }
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve every role; stops on SIGTERM/SIGINT, reloads the TLS certificate on SIGHUP.")
    @OptionGroup var options: DataOption
    @Option(name: .long, help: "Address to bind.") var host = "127.0.0.1"
    @Option(name: .long, help: "Port to bind (0 = any free port).") var port = 8005
    @Option(name: .long, help: "Roles to host: all (default), rps, dta1 or dta2.") var role = "all"
    @Option(name: .long, help: "With --role rps: base URL of D-TA 1 (e.g. http://127.0.0.1:8001/).")
    var dta1URL: String?
    @Option(name: .long, help: "With --role rps: public base URL of D-TA 2, given to clients as certivoxURL.")
    var dta2URL: String?
    @Option(name: .long, help: ArgumentHelp(
        "Serve HTTPS (TLS 1.2 and 1.3) with this certificate (PEM, leaf first); needs --tls-key. SIGHUP reloads both.",
        valueName: "file"))
    var tlsCert: String?
    @Option(name: .long, help: ArgumentHelp("The certificate's private key (PEM); must not be accessible by group or others.",
                                            valueName: "file"))
    var tlsKey: String?

    func validate() throws {
        guard ["all", "rps", "dta1", "dta2"].contains(role) else { throw ValidationError("--role must be all, rps, dta1 or dta2") }
        if (tlsCert == nil) != (tlsKey == nil) { throw ValidationError("--tls-cert and --tls-key go together") }
        if role == "rps" && (dta1URL == nil || dta2URL == nil) {
            throw ValidationError("--role rps needs --dta1-url and --dta2-url")
        }
    }

    private var serverRole: ServerRole {
        switch role {
        case "rps": return .rps(dta1URL: dta1URL ?? "", dta2URL: dta2URL ?? "")
        case "dta1": return .dta(index: 1)
        case "dta2": return .dta(index: 2)
        default: return .all
        }
    }

    func run() async throws {
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        let logger = Logger(label: "mpin-server")
        // The soft descriptor limit up to the hard one (systemd's soft default is 1,024); the
        // connection cap stays an eighth below whatever is in force (ConnectionLimits).
        ConnectionLimits.raiseDescriptorLimit()
        // Held until the process ends: `restore` refuses to run under it, and this refuses to
        // start under a restore.
        let lock: DataDirectoryLock?
        do { lock = try DataDirectoryLock.serving(options.data) } catch let e as BackupError {
            throw ValidationError("cannot start: \(e.description)")
        }
        let server: MPinServer
        do {
            let tls = tlsCert.flatMap { cert in tlsKey.map { TLSFiles(certificatePath: cert, keyPath: $0) } }
            server = try await MPinServer(dataDirectory: options.data, host: host, port: port, role: serverRole,
                                          tls: tls, logger: logger)
        } catch let e as SetupError {
            throw ValidationError(e.description)
        } catch let e as TLSSetupError {
            throw ValidationError("cannot start: \(e.description)")
        } catch let e as ServerError {
            throw ValidationError("cannot start: \(e.message)")
        }
        try await server.serve()
        withExtendedLifetime(lock) {}
        logger.info("mpin-server stopped")
    }
}

struct User: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Administer users.",
        subcommands: [List.self, Show.self, Add.self, Invite.self, Pending.self, Activate.self, Identities.self, Revoke.self,
                      Unblock.self, Delete.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List users.")
        @OptionGroup var options: DataOption
        @Flag(name: .long, help: "JSON output.") var json = false
        func run() async throws {
            let users = try await withAdmin(options) { try await $0.list() }
            if json {
                emitJSON(users)
            } else {
                for u in users {
                    print("\(u.userId)\t\(u.state)\tidentities=\(u.identities)\tpending=\(u.pendingRegistrations)"
                          + "\tfailed=\(u.failedAttempts)\(u.blocked ? "\tBLOCKED" : "")")
                }
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a user: state, identities, pending registrations, and the offline logins hosts reported.",
            discussion: """
                Offline logins are those a host let the user make with its TPM while the backend was \
                unreachable (pam_mpin's offline = yes); the host reports them with the user's next online \
                login. Times are the host's clock; `reported` is when this server received them.
                """)
        @OptionGroup var options: DataOption
        @Flag(name: .long, help: "JSON output.") var json = false
        @Argument(help: "User identity.") var identity: String
        func run() async throws {
            let details = try await withAdmin(options) { try await $0.show(userID: identity) }
            if json { return emitJSON(details) }
            let format = ISO8601DateFormatter()
            func time(_ t: Double) -> String { format.string(from: Date(timeIntervalSince1970: t)) }
            let u = details.user
            print("user \(u.userId)\tstate=\(u.state)\tidentities=\(u.identities)\tpending=\(u.pendingRegistrations)"
                  + "\tfailed=\(u.failedAttempts)\(u.blocked ? "\tBLOCKED" : "")")
            for i in details.identities {
                print("identity \(i.fingerprint)\tissued=\(time(i.created))\tfailed=\(i.failedAttempts)\(i.blocked ? "\tBLOCKED" : "")")
            }
            for r in details.pendingRegistrations {
                print("pending \(r.fingerprint)\tstarted=\(time(r.created))\texpires=\(time(r.expires))"
                      + "\tdevice=\(r.deviceName.isEmpty ? "-" : r.deviceName)\(r.active ? "\tACTIVE" : "")")
            }
            if details.offlineLogins.isEmpty { print("offline logins: none reported") }
            for o in details.offlineLogins {
                print("offline \(time(Double(o.time)))\thost=\(o.host)\tservice=\(o.service)\toutcome=\(o.outcome)"
                      + "\tidentity=\(o.fingerprint.prefix(16))\treported=\(time(o.reported))\tfrom=\(o.source.isEmpty ? "-" : o.source)")
            }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a user and print a one-time activation code for StartRegistration.")
        @OptionGroup var options: DataOption
        @Flag(name: .long, help: "JSON output.") var json = false
        @Argument(help: "User identity.") var identity: String
        func run() async throws {
            let code = try await withAdmin(options) { try await $0.add(userID: identity) }
            if json { emitJSON(["userId": identity, "activationCode": code]) } else { print(code) }
        }
    }

    struct Invite: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a registration code with which the user enrols at their first login (pam_mpin's enrol).")
        @OptionGroup var options: DataOption
        @Flag(name: .long, help: "JSON output.") var json = false
        @Option(name: .long, help: "Seconds the code stays valid (60 to 2592000, 30 days).") var ttl = 7 * 24 * 3600
        @Argument(help: "User identity (the one pam_mpin's enrol_identity makes of the Unix user name).") var identity: String
        func run() async throws {
            let code = try await withAdmin(options) { try await $0.invite(userID: identity, ttlSeconds: ttl) }
            if json { emitJSON(["userId": identity, "registrationCode": code, "ttlSeconds": String(ttl)]) } else { print(code) }
        }
    }

    struct Pending: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List a user's pending registrations: fingerprint, started, expires, device name, address.")
        @OptionGroup var options: DataOption
        @Flag(name: .long, help: "JSON output.") var json = false
        @Argument(help: "User identity.") var identity: String
        func run() async throws {
            let pending = try await withAdmin(options) { try await $0.pending(userID: identity) }
            if json { return emitJSON(pending) }
            let format = ISO8601DateFormatter()
            for r in pending {
                let device = r.deviceName.isEmpty ? "-" : r.deviceName
                print("\(r.fingerprint)\tstarted=\(format.string(from: Date(timeIntervalSince1970: r.created)))"
                      + "\texpires=\(format.string(from: Date(timeIntervalSince1970: r.expires)))\tdevice=\(device)"
                      + "\tfrom=\(r.source.isEmpty ? "-" : r.source)\(r.active ? "\tACTIVE" : "")")
            }
        }
    }

    struct Activate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Activate a user and the one pending registration named by --registration.",
            discussion: """
                Anyone can start a registration for any identity, so activation never covers all of a \
                user's pending registrations: name the user's own by its fingerprint (`mpin-server user \
                pending ID` lists them; the user's device shows its own with `mpin list --fingerprints`). \
                Without --registration the user is activated only when nothing is pending.
                """)
        @OptionGroup var options: DataOption
        @Flag(name: .long, help: "JSON output.") var json = false
        @Option(name: .long, help: "The registration's fingerprint, or its first 8 or more hex digits.")
        var registration: String?
        @Argument(help: "User identity.") var identity: String
        func run() async throws {
            try await simple(options, json, identity, "activated") { try await $0.activate(userID: identity, registration: registration) }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a user: time permits are refused.")
        @OptionGroup var options: DataOption
        @Flag(name: .long, help: "JSON output.") var json = false
        @Argument(help: "User identity.") var identity: String
        func run() async throws { try await simple(options, json, identity, "revoked") { try await $0.revoke(userID: identity) } }
    }

    struct Identities: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List a user's issued identities: fingerprint, issued, wrong PINs, BLOCKED.")
        @OptionGroup var options: DataOption
        @Flag(name: .long, help: "JSON output.") var json = false
        @Argument(help: "User identity.") var identity: String
        func run() async throws {
            let all = try await withAdmin(options) { try await $0.identities(userID: identity) }
            if json { return emitJSON(all) }
            let format = ISO8601DateFormatter()
            for i in all {
                print("\(i.fingerprint)\tissued=\(format.string(from: Date(timeIntervalSince1970: i.created)))"
                      + "\tfailed=\(i.failedAttempts)\(i.blocked ? "\tBLOCKED" : "")")
            }
        }
    }

    struct Unblock: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Clear the wrong-PIN counter of one of a user's identities.",
            discussion: """
                The blocked identity may be a stolen token, so only one is unblocked: the one \
                --identity names (`mpin-server user identities ID` lists them; the user's device shows \
                its own with `mpin list --fingerprints`), or without it the only one with wrong PINs.
                """)
        @OptionGroup var options: DataOption
        @Flag(name: .long, help: "JSON output.") var json = false
        @Option(name: .long, help: "The identity's fingerprint, or its first 8 or more hex digits.")
        var identity: String?
        @Argument(help: "User identity.") var user: String
        func run() async throws {
            try await simple(options, json, user, "unblocked") { try await $0.unblock(userID: user, identity: identity) }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a user and its identities.")
        @OptionGroup var options: DataOption
        @Flag(name: .long, help: "JSON output.") var json = false
        @Argument(help: "User identity.") var identity: String
        func run() async throws { try await simple(options, json, identity, "deleted") { try await $0.delete(userID: identity) } }
    }
}

/// `mpin-server app …`: the applications (OAuth clients) of the MFA flavour (docs/MFA.md §2).
struct App: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Administer applications (OpenID Connect clients).",
        subcommands: [Add.self, List.self, Delete.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register an application; prints its client id and secret (the secret only this once).")
        @OptionGroup var options: DataOption
        @Flag(name: .long, help: "JSON output.") var json = false
        @Argument(help: "Application name, shown to users.") var name: String
        @Option(name: .long, help: "The one redirect URI (absolute http/https, compared exactly).")
        var redirectURI: String
        @Option(name: .long, help: "URL of the application's logo.") var logoURL = ""
        @Option(name: .long, help: "Signature algorithm of its ID tokens: RS256 (the OpenID Connect default) or ES256.")
        var idTokenAlg = "RS256"
        func run() async throws {
            let created = try await appCommand(options) {
                try await $0.add(name: name, redirectURI: redirectURI, logoURL: logoURL, idTokenAlg: idTokenAlg)
            }
            if json {
                emitJSON(created)
            } else {
                print("client_id: \(created.clientId)")
                print("client_secret: \(created.clientSecret)")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List applications (never their secrets).")
        @OptionGroup var options: DataOption
        @Flag(name: .long, help: "JSON output.") var json = false
        func run() async throws {
            let apps = try await appCommand(options) { try await $0.list() }
            if json {
                emitJSON(apps)
            } else {
                for a in apps { print("\(a.clientId)\t\(a.name)\t\(a.redirectURI)\t\(a.idTokenAlg)") }
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete an application.")
        @OptionGroup var options: DataOption
        @Flag(name: .long, help: "JSON output.") var json = false
        @Argument(help: "Client id.") var clientID: String
        func run() async throws {
            try await appCommand(options) { try await $0.delete(clientID: clientID) }
            if json { emitJSON(["clientId": clientID, "result": "deleted"]) } else { print("deleted \(clientID)") }
        }
    }
}

/// Opens the data directory's database (SQLite or PostgreSQL), runs `action` on it, closes it.
private func withDatabase<T>(_ options: DataOption, _ action: (DataDirectory, ServerDatabase) async throws -> T) async throws -> T {
    let dir = DataDirectory(path: options.data)
    let database: ServerDatabase
    do { database = try await dir.openDatabase() } catch let e as SetupError { throw ValidationError(e.description) }
    do {
        let result = try await action(dir, database)
        await database.close()
        return result
    } catch {
        await database.close()
        throw error
    }
}

private func appCommand<T>(_ options: DataOption, _ action: (AppAdmin) async throws -> T) async throws -> T {
    try await withDatabase(options) { _, database in
        do { return try await action(AppAdmin(database: database)) } catch let e as AppError { throw ValidationError(e.description) }
    }
}

private func withAdmin<T>(_ options: DataOption, _ action: (Admin) async throws -> T) async throws -> T {
    try await withDatabase(options) { dir, database in
        let config: ServerConfig
        do { config = try dir.loadConfig() } catch let e as SetupError { throw ValidationError(e.description) }
        do { return try await action(Admin(database: database, config: config)) } catch let e as AdminError {
            throw ValidationError(e.description)
        }
    }
}

private func simple(_ options: DataOption, _ json: Bool, _ identity: String, _ verb: String,
                    _ action: (Admin) async throws -> Void) async throws {
    try await withAdmin(options, action)
    if json { emitJSON(["userId": identity, "result": verb]) } else { print("\(verb) \(identity)") }
}

private func emitJSON(_ value: some Encodable) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    if let data = try? encoder.encode(value) { print(String(decoding: data, as: UTF8.self)) }
}
