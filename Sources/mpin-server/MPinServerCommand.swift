import ArgumentParser
import Foundation
import Logging
import MPinServer

/// `mpin-server`: the M-Pin backend (RPS, two D-TAs, authentication server) on SQLite.
@main
struct MPinServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mpin-server",
        abstract: "Milagro-MFA-compatible M-Pin backend on SQLite.",
        subcommands: [Init.self, Serve.self, User.self])
}

struct DataOption: ParsableArguments {
    @Option(name: .long, help: "Data directory (config, keys, database).")
    var data: String
}

struct Init: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create the data directory: config, both D-TA master-secret shares, app key, database.")
    @OptionGroup var options: DataOption
    @Flag(name: .long, help: "Activate every registration at once (demo). Default: activation codes.")
    var autoActivate = false

    func run() throws {
        do {
            try DataDirectory.initialise(path: options.data, autoActivate: autoActivate)
            print("initialised \(options.data)")
        } catch let e as SetupError {
            throw ValidationError(e.description)
        }
    }
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Serve every role; stops on SIGTERM/SIGINT.")
    @OptionGroup var options: DataOption
    @Option(name: .long, help: "Address to bind.") var host = "127.0.0.1"
    @Option(name: .long, help: "Port to bind (0 = any free port).") var port = 8005

    func run() async throws {
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        let logger = Logger(label: "mpin-server")
        let server: MPinServer
        do {
            server = try MPinServer(dataDirectory: options.data, host: host, port: port, logger: logger)
        } catch let e as SetupError {
            throw ValidationError(e.description)
        }
        try await server.serve()
        logger.info("mpin-server stopped")
    }
}

struct User: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Administer users.",
        subcommands: [List.self, Add.self, Activate.self, Revoke.self, Unblock.self, Delete.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List users.")
        @OptionGroup var options: DataOption
        @Flag(name: .long, help: "JSON output.") var json = false
        func run() throws {
            let users = try admin(options).list()
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

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a user and print a one-time activation code for StartRegistration.")
        @OptionGroup var options: DataOption
        @Flag(name: .long, help: "JSON output.") var json = false
        @Argument(help: "User identity.") var identity: String
        func run() throws {
            let code = try admin(options).add(userID: identity)
            if json { emitJSON(["userId": identity, "activationCode": code]) } else { print(code) }
        }
    }

    struct Activate: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Activate a user and its pending registrations.")
        @OptionGroup var options: DataOption
        @Flag(name: .long, help: "JSON output.") var json = false
        @Argument(help: "User identity.") var identity: String
        func run() throws { try simple(options, json, identity, "activated") { try $0.activate(userID: identity) } }
    }

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a user: time permits are refused.")
        @OptionGroup var options: DataOption
        @Flag(name: .long, help: "JSON output.") var json = false
        @Argument(help: "User identity.") var identity: String
        func run() throws { try simple(options, json, identity, "revoked") { try $0.revoke(userID: identity) } }
    }

    struct Unblock: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Clear a user's wrong-PIN counters.")
        @OptionGroup var options: DataOption
        @Flag(name: .long, help: "JSON output.") var json = false
        @Argument(help: "User identity.") var identity: String
        func run() throws { try simple(options, json, identity, "unblocked") { try $0.unblock(userID: identity) } }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a user and its identities.")
        @OptionGroup var options: DataOption
        @Flag(name: .long, help: "JSON output.") var json = false
        @Argument(help: "User identity.") var identity: String
        func run() throws { try simple(options, json, identity, "deleted") { try $0.delete(userID: identity) } }
    }
}

private func admin(_ options: DataOption) throws -> Admin {
    do {
        let dir = DataDirectory(path: options.data)
        return Admin(storage: try dir.openStorage(), config: try dir.loadConfig())
    } catch let e as SetupError {
        throw ValidationError(e.description)
    }
}

private func simple(_ options: DataOption, _ json: Bool, _ identity: String, _ verb: String,
                    _ action: (Admin) throws -> Void) throws {
    do { try action(try admin(options)) } catch let e as AdminError {
        throw ValidationError(e.description)
    }
    if json { emitJSON(["userId": identity, "result": verb]) } else { print("\(verb) \(identity)") }
}

private func emitJSON(_ value: some Encodable) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    if let data = try? encoder.encode(value) { print(String(decoding: data, as: UTF8.self)) }
}
