import Foundation
import Synchronization
import Logging
import MPinWire
import NIOSSL
import PostgresNIO
import ServiceLifecycle

/// The server's state in a PostgreSQL database that several mpin-server nodes share
/// (postgres-nio). The same contract as `SQLiteStorage`, the same tables and the same hashes.
///
/// **Atomicity across nodes.** Every method is one transaction at READ COMMITTED: either one
/// statement (which PostgreSQL runs as its own transaction), or BEGIN … COMMIT on one pooled
/// connection. A method that reads and then writes locks the rows it decides on with
/// `SELECT … FOR UPDATE` (or decides inside one `UPDATE`/`DELETE … RETURNING`), so that a
/// concurrent call on this node or on another waits for the row and then sees the committed
/// result, never a stale one:
/// * the wrong-PIN counter (`evaluate`): the authOTT's row and the identity's row are locked
///   before the counter is read, so parallel wrong PINs on several nodes neither lose an
///   increment nor block twice, and an authOTT is evaluated once;
/// * single-use records: a registration (`consumeRegistration` locks it), an access number's
///   first approval (`UPDATE … WHERE auth_ott IS NULL RETURNING`), registration and
///   authorization codes (`DELETE … RETURNING`, `FOR UPDATE`), an MFA session's redirect (`FOR UPDATE`).
/// No method locks two rows of one table in different orders, so these locks do not deadlock.
///
/// **Durability.** What a login leaves behind for a few seconds (a pass-2 record, its deletion
/// when used, an access number, a session) is committed with `synchronous_commit = off` (the
/// pool's connections start with it): the commit does not wait for the WAL to reach the disk,
/// like SQLite's `synchronous = NORMAL`; a crash of the PostgreSQL server may lose the last
/// fraction of a second of those, which only fails the logins in flight. What must survive
/// any crash is committed durably (`SET LOCAL synchronous_commit = on`): a counted wrong PIN
/// and a block, registrations and issued identities, the administrator's changes, used codes
/// and tokens, signing keys and their counters.
///
/// Pass-1 state stays in the node's memory (`Pass1Store`): a login's pass 1 and pass 2 go to
/// the same node (README, "Several nodes on PostgreSQL").
final class PostgresStorage: StorageBackend {
    let client: PostgresClient
    let url: PostgresURL
    let logger: Logger
    /// The client's run loop when this storage runs it itself (the commands); nil when a
    /// service group runs `client` (the server, `service`).
    private let runner: Task<Void, Never>?
    /// This node's copies of the pass-2 records it wrote for logins without an access number,
    /// each with the identity as read in the same statement, for its final step (`evaluate`).
    /// The records themselves stay in the database, where any node finds them.
    let pendingAuth = PendingAuthStore()
    /// Final steps decided on this node's copy and applied in one statement (`evaluate`), for
    /// the tests that show the path is taken when nothing changed and left when something did.
    let singleStatementVerdicts = Atomic<Int>(0)

    private init(client: PostgresClient, url: PostgresURL, logger: Logger, runsClient: Bool) {
        self.client = client; self.url = url; self.logger = logger
        runner = runsClient ? Task { await client.run() } : nil
    }

    /// The pool's connections, to run in the server's service group (as Hummingbird's
    /// examples run theirs): it starts with the server, and stops after it on shutdown. Nil
    /// when this storage runs its client itself.
    var service: (any Service)? { runner == nil ? client : nil }

    /// Connects, checks and migrates the schema. Fails with `SetupError.database` (with the
    /// server's reason) when the database cannot be reached or refuses the login, and with
    /// `SetupError.schemaTooNew` when a newer mpin-server migrated it.
    /// `runsClient`: run the pool's client here, until `close()` (a command); false when a
    /// service group runs it (`service`, the server).
    static func open(url: PostgresURL, password: String?, logger: Logger, runsClient: Bool = true,
                     maximumConnections: Int = 20) async throws -> PostgresStorage {
        let clientTLS: PostgresClient.Configuration.TLS
        let connectionTLS: PostgresConnection.Configuration.TLS
        switch url.sslMode {
        case .disable: clientTLS = .disable; connectionTLS = .disable
        case .prefer: clientTLS = .prefer(.makeClientConfiguration()); connectionTLS = .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
        case .require: clientTLS = .require(.makeClientConfiguration()); connectionTLS = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
        }
        // One direct connection first, for the migration: the pool retries a failing
        // connection for a minute without saying why, this says at once (refused, unknown
        // database, authentication).
        let connection: PostgresConnection
        do {
            var c = PostgresConnection.Configuration(host: url.host, port: url.port, username: url.user, password: password,
                                                     database: url.database, tls: connectionTLS)
            c.options.connectTimeout = .seconds(5)
            connection = try await PostgresConnection.connect(configuration: c, id: 0, logger: logger)
        } catch {
            throw SetupError.database(url.description, "cannot connect: " + reason(error))
        }
        do {
            try await migrate(connection, url: url, logger: logger)
            try? await connection.close()
        } catch let e as SetupError {
            try? await connection.close()
            throw e
        } catch {
            try? await connection.close()
            throw SetupError.database(url.description, "cannot migrate the schema: " + reason(error))
        }
        var config = PostgresClient.Configuration(host: url.host, port: url.port, username: url.user, password: password,
                                                  database: url.database, tls: clientTLS)
        config.options.connectTimeout = .seconds(5)
        config.options.maximumConnections = maximumConnections
        // The server keeps a few connections open for good: the pool schedules an idle timer (a
        // few tasks and a clock sleep) each time it takes back a connection above this minimum,
        // and cancels it at the next lease, which cost ~4 % of the node's CPU per login under
        // load (docs/PERFORMANCE.md §2.2). A command opens connections only as it needs them.
        if !runsClient { config.options.minimumConnections = min(Self.serverMinimumConnections, maximumConnections) }
        // The default for this pool's commits; durable ones say so (see Durability above).
        config.options.additionalStartupParameters = [("synchronous_commit", "off")]
        return PostgresStorage(client: PostgresClient(configuration: config, backgroundLogger: logger), url: url, logger: logger,
                               runsClient: runsClient)
    }

    /// Connections the server's pool keeps open even when idle (see `open`).
    static let serverMinimumConnections = 8

    func close() async {
        guard let runner else { return }
        runner.cancel()
        await runner.value
    }

    /// A failed statement's SQLSTATE for the log, "none" without one (not its message: a
    /// message may quote a value).
    static func sqlState(_ error: any Error) -> String { (error as? PSQLError)?.serverInfo?[.sqlState] ?? "none" }

    /// A failure's reason for an operator: the server's message, or the connection's error.
    /// (PSQLError's own description is deliberately generic.)
    static func reason(_ error: any Error) -> String {
        if let e = error as? PSQLError {
            if let message = e.serverInfo?[.message] {
                return message + (e.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? "")
            }
            if let underlying = e.underlying { return "\(underlying)" }
            return "\(e.code)"
        }
        if let e = error as? PostgresTransactionError {
            if let inner = e.closureError ?? e.beginError ?? e.commitError { return reason(inner) }
        }
        return "\(error)"
    }

    // MARK: Transactions

    /// Runs `body` between BEGIN and COMMIT on one pooled connection; ROLLBACK when it throws,
    /// rethrowing its error as it is. `durable`: the commit waits for the WAL to be on disk.
    func transaction<T: Sendable>(durable: Bool = true, _ body: @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        let logger = logger
        return try await client.withConnection { connection in
            try await Self.transaction(on: connection, logger: logger, durable: durable, body)
        }
    }

    /// The same on a given connection (the migration's own, or a pooled one).
    static func transaction<T: Sendable>(on connection: PostgresConnection, logger: Logger, durable: Bool = false,
                                         _ body: (PostgresConnection) async throws -> T) async throws -> T {
        try await connection.rows("BEGIN", logger)
        do {
            if durable { try await connection.rows(Self.durableCommit, logger) }
            let value = try await body(connection)
            try await connection.rows("COMMIT", logger)
            return value
        } catch {
            _ = try? await connection.rows("ROLLBACK", logger)
            throw error
        }
    }

    /// Makes the transaction's commit wait for the WAL to reach the disk.
    static let durableCommit: PostgresQuery = "SET LOCAL synchronous_commit = on"

    /// One statement, which PostgreSQL runs as a transaction of its own; its rows. A durable
    /// one (the default) runs in a transaction that commits durably; a read or a short-lived
    /// record passes `durable: false` and costs one round trip.
    @discardableResult
    func run(_ query: PostgresQuery, durable: Bool = true) async throws -> [PostgresRow] {
        guard durable else { return try await client.query(query, logger: logger).collect() }
        let logger = logger
        return try await transaction { c in try await c.rows(query, logger) }
    }

    /// The first row of a prepared statement run through the pool (one statement, its own
    /// transaction, committed without waiting for the WAL, as `run(_:durable: false)`); the
    /// rest, if any, read and dropped.
    func firstRow<Statement: PostgresPreparedStatement>(of statement: Statement) async throws -> Statement.Row? {
        var first: Statement.Row? = nil
        for try await row in try await client.execute(statement, logger: logger) where first == nil { first = row }
        return first
    }

    /// `SELECT 1` through the pool within two seconds (`/health`).
    func healthCheck() async throws {
        let client = client, logger = logger
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { _ = try await client.query("SELECT 1", logger: logger).collect() }
            group.addTask {
                try await Task.sleep(for: .seconds(2))
                throw SetupError.database("postgresql", "no answer within 2 s")
            }
            _ = try await group.next()
            group.cancelAll()
        }
    }

    // MARK: Schema

    /// The schema's versions, in order: each a list of statements run in one transaction with
    /// the version number. Version 1 is SQLite's schema after its migrations v1 to v5-device;
    /// a new version is appended, never an old one changed.
    static let migrations: [[String]] = [
        [
            """
            CREATE TABLE users (
                user_id text PRIMARY KEY,
                state text NOT NULL,                 -- pending | active | revoked
                activation_code_hash text,
                created double precision NOT NULL)
            """,
            """
            CREATE TABLE registrations (
                mpin_id text PRIMARY KEY,            -- lower-case hex
                user_id text NOT NULL,
                reg_ott_hash text NOT NULL,
                activate_key_hash text NOT NULL,
                active boolean NOT NULL,
                expires double precision NOT NULL)
            """,
            "CREATE INDEX registrations_user ON registrations(user_id)",
            """
            CREATE TABLE identities (
                mpin_id text PRIMARY KEY,
                user_id text NOT NULL,
                attempts bigint NOT NULL DEFAULT 0,
                blocked_at double precision,
                created double precision NOT NULL)
            """,
            "CREATE INDEX identities_user ON identities(user_id)",
            """
            CREATE TABLE auth (
                auth_ott_hash text PRIMARY KEY,
                mpin_id text NOT NULL,
                success boolean NOT NULL,
                wid text NOT NULL,
                otp text,
                status bigint,
                browser_ready boolean NOT NULL DEFAULT FALSE,
                logout_user text, logout_token text,
                expires double precision NOT NULL)
            """,
            """
            CREATE TABLE access_numbers (
                wid text PRIMARY KEY,
                web_ott_hash text NOT NULL UNIQUE,
                auth_ott text,
                expires double precision NOT NULL,
                description text NOT NULL DEFAULT '')
            """,
            """
            CREATE TABLE sessions (
                token_hash text PRIMARY KEY,
                user_id text NOT NULL,
                expires double precision NOT NULL)
            """,
            """
            CREATE TABLE apps (
                client_id text PRIMARY KEY,
                name text NOT NULL,
                redirect_uri text NOT NULL,
                logo_url text NOT NULL,
                secret_hash text NOT NULL,
                created double precision NOT NULL)
            """,
            """
            CREATE TABLE mfa_sessions (
                access_code_hash text PRIMARY KEY,
                web_ott_hash text NOT NULL UNIQUE,
                client_id text NOT NULL,
                redirect_uri text NOT NULL,
                oauth_state text NOT NULL,
                nonce text,
                code_challenge text NOT NULL,
                preroll_id text NOT NULL,
                state text NOT NULL,                 -- new | wid | user | authenticated | done | aborted
                user_id text,
                redirect_url text,
                expires double precision NOT NULL)
            """,
            "CREATE INDEX mfa_sessions_client ON mfa_sessions(client_id)",
            """
            CREATE TABLE authz_codes (
                code_hash text PRIMARY KEY,
                client_id text NOT NULL,
                redirect_uri text NOT NULL,
                code_challenge text NOT NULL,
                nonce text,
                user_id text NOT NULL,
                auth_time double precision NOT NULL,
                used boolean NOT NULL DEFAULT FALSE,
                expires double precision NOT NULL)
            """,
            "CREATE INDEX authz_codes_client ON authz_codes(client_id)",
            """
            CREATE TABLE reg_codes (
                code_hash text PRIMARY KEY,
                user_id text NOT NULL,
                expires double precision NOT NULL)
            """,
        ],
        // 2: DVS registration tokens and signing keys (docs/MFA.md §14; SQLite's v6).
        [
            """
            CREATE TABLE dvs_tokens (
                token_hash text PRIMARY KEY,
                user_id text NOT NULL,
                expires double precision NOT NULL)
            """,
            """
            CREATE TABLE signing_keys (
                mpin_id text PRIMARY KEY,            -- the signing mpinId, lower-case hex
                user_id text NOT NULL,
                public_key text NOT NULL,            -- Pa, lower-case hex
                attempts bigint NOT NULL DEFAULT 0,
                blocked_at double precision,
                created double precision NOT NULL)
            """,
            "CREATE INDEX signing_keys_user ON signing_keys(user_id)",
        ],
        // 3: who started a registration (docs/SECURITY.md §6.2; SQLite's v7).
        [
            "ALTER TABLE registrations ADD COLUMN created double precision NOT NULL DEFAULT 0",
            "ALTER TABLE registrations ADD COLUMN device_name text NOT NULL DEFAULT ''",
            "ALTER TABLE registrations ADD COLUMN source text NOT NULL DEFAULT ''",
        ],
        // 4: the ID token algorithm of each application (docs/MFA.md §7.1; SQLite's v8).
        [
            "ALTER TABLE apps ADD COLUMN id_token_alg text NOT NULL DEFAULT 'ES256'",
        ],
        // 5 and later: the changes written once for both backends (`StorageSchema.sharedMigrations`).
    ] + StorageSchema.sharedMigrations.map { $0.changes.flatMap { $0.sql(.postgres) } }

    /// The schema version this program knows.
    static var schemaVersion: Int { migrations.count }

    /// Brings the schema to `schemaVersion` in one transaction. An advisory lock serialises
    /// nodes starting at once; `mpin_schema` holds the version; a newer one is refused before
    /// anything changes.
    static func migrate(_ connection: PostgresConnection, url: PostgresURL, logger: Logger) async throws {
        let known = schemaVersion
        try await transaction(on: connection, logger: logger) { c in
            try await c.rows("SELECT pg_advisory_xact_lock(1836083566)", logger)  // "mpin"
            try await c.rows("""
                CREATE TABLE IF NOT EXISTS mpin_schema (
                    singleton boolean PRIMARY KEY DEFAULT TRUE CHECK (singleton),
                    version integer NOT NULL)
                """, logger)
            let rows = try await c.rows("SELECT version FROM mpin_schema", logger)
            let found = try rows.first?.decode(Int.self) ?? 0
            if found > known { throw SetupError.schemaTooNew(database: url.description, found: found, known: known) }
            guard found < known else { return }
            for version in (found + 1)...known {
                for statement in migrations[version - 1] {
                    try await c.rows(PostgresQuery(unsafeSQL: statement), logger)
                }
            }
            if rows.isEmpty {
                try await c.rows("INSERT INTO mpin_schema (version) VALUES (\(known))", logger)
            } else {
                try await c.rows("UPDATE mpin_schema SET version = \(known)", logger)
            }
        }
    }

    // MARK: Registration

    func registrationMatches(mpinID: String, regOTTHash: String, now: Date) async throws -> Bool? {
        let rows = try await run("SELECT reg_ott_hash, expires FROM registrations WHERE mpin_id = \(mpinID)", durable: false)
        guard let row = rows.first else { return nil }
        let (hash, expires) = try row.decode((String, Double).self)
        guard expires > now.timeIntervalSince1970 else { return nil }
        return hash == regOTTHash
    }

    func saveRegistration(mpinID: String, userID: String, regOTTHash: String, activateKeyHash: String,
                          expires: Date, mode: VerificationMode, activateCodeHash: String?, regCodeHash: String?, details: RegistrationDetails, now: Date) async throws -> RegistrationOutcome {
        let t = now.timeIntervalSince1970, logger = logger
        return try await transaction { c in
            // The user's row, locked: its state and activation code decide, and may change here.
            let user = try await c.rows("""
                SELECT state, activation_code_hash FROM users WHERE user_id = \(userID) FOR UPDATE
                """, logger).first.map { row in
                let (state, code) = try row.decode((String, String?).self)
                return RegistrationPolicy.User(state: state, activationCodeHash: code)
            }
            if !UserStatePolicy.mayRegister(user?.state) { return .refused }
            var mode = mode
            var replaced = false
            if let regCodeHash {
                // A registration code of this user, live and unused, stands for the identity's
                // verification (MFA.md §8); used up here, in the registration's transaction.
                // The user's codes are locked first: concurrent tries for one user are judged
                // and counted one after the other.
                let live = try await c.rows("""
                    SELECT failures FROM reg_codes WHERE user_id = \(userID) AND expires > \(t) FOR UPDATE
                    """, logger).map { try $0.decode(Int.self) }
                let used = try await c.rows("""
                    DELETE FROM reg_codes WHERE code_hash = \(regCodeHash) AND user_id = \(userID) AND expires > \(t) RETURNING 1
                    """, logger)
                guard used.count == 1 else {
                    guard let failures = WrongRegCodeCounter.counted(failures: live.max() ?? 0, liveCodes: live.count) else {
                        return .regCodeRefused(wrongCodes: 0)
                    }
                    try await c.rows("UPDATE reg_codes SET failures = \(failures) WHERE user_id = \(userID)", logger)
                    return .regCodeRefused(wrongCodes: failures)
                }
                // The right code: the count of wrong ones starts again on the user's other codes.
                try await c.rows("UPDATE reg_codes SET failures = 0 WHERE user_id = \(userID)", logger)
                mode = .auto
                // The identity it replaces (the same user's, never this one) goes with it.
                if !details.replaces.isEmpty, details.replaces != mpinID {
                    replaced = try await c.rows("""
                        DELETE FROM identities WHERE mpin_id = \(details.replaces) AND user_id = \(userID) RETURNING 1
                        """, logger).count == 1
                }
            }
            if RegistrationPolicy.refusesActivationCode(user: user, mode: mode, activateCodeHash: activateCodeHash) {
                return .activationCodeRefused
            }
            let (active, userWrite) = RegistrationPolicy.decide(user: user, mode: mode, activateCodeHash: activateCodeHash)
            switch userWrite {
            case .none: break
            case .createPending:
                try await c.rows("""
                    INSERT INTO users (user_id, state, created) VALUES (\(userID), 'pending', \(t)) ON CONFLICT DO NOTHING
                    """, logger)
            case .upsertActive:
                try await c.rows("""
                    INSERT INTO users (user_id, state, created) VALUES (\(userID), 'active', \(t))
                    ON CONFLICT (user_id) DO UPDATE SET state = 'active'
                    """, logger)
            case .activateUsingCode:
                try await c.rows("UPDATE users SET state = 'active', activation_code_hash = NULL WHERE user_id = \(userID)", logger)
            }
            // Sent again: the first start time, expiry, device name and address stay.
            try await c.rows("""
                INSERT INTO registrations (mpin_id, user_id, reg_ott_hash, activate_key_hash, active, expires,
                                           created, device_name, source)
                VALUES (\(mpinID), \(userID), \(regOTTHash), \(activateKeyHash), \(active), \(expires.timeIntervalSince1970),
                        \(t), \(details.deviceName), \(details.source))
                ON CONFLICT (mpin_id) DO UPDATE SET reg_ott_hash = EXCLUDED.reg_ott_hash,
                  activate_key_hash = EXCLUDED.activate_key_hash, active = EXCLUDED.active OR registrations.active,
                  expires = LEAST(registrations.expires, EXCLUDED.expires)
                WHERE registrations.user_id = EXCLUDED.user_id
                """, logger)
            // The bounds per identity and per address: the oldest beyond them go.
            try await c.rows("""
                DELETE FROM registrations WHERE mpin_id IN (SELECT mpin_id FROM registrations WHERE user_id = \(userID)
                                                            ORDER BY created DESC, mpin_id DESC OFFSET \(RegistrationPolicy.maxPendingPerUser))
                """, logger)
            if !details.source.isEmpty {
                try await c.rows("""
                    DELETE FROM registrations WHERE mpin_id IN (SELECT mpin_id FROM registrations WHERE source = \(details.source)
                                                                ORDER BY created DESC, mpin_id DESC OFFSET \(RegistrationPolicy.maxPendingPerSource))
                    """, logger)
            }
            return .stored(active: active, replaced: replaced)
        }
    }

    func activateRegistration(mpinID: String, activateKeyHash: String, now: Date) async throws -> Bool {
        try await !run("""
            UPDATE registrations SET active = TRUE
            WHERE mpin_id = \(mpinID) AND activate_key_hash = \(activateKeyHash) AND expires > \(now.timeIntervalSince1970)
            RETURNING 1
            """).isEmpty
    }

    func consumeRegistration(mpinID: String, regOTTHash: String, now: Date) async throws -> ShareOutcome {
        let logger = logger
        return try await transaction { c in
            // Locked: of two concurrent signature steps one issues, the other finds it gone.
            guard let row = try await c.rows("""
                SELECT r.user_id, r.reg_ott_hash, r.active, r.expires, u.state FROM registrations r
                LEFT JOIN users u ON u.user_id = r.user_id WHERE r.mpin_id = \(mpinID) FOR UPDATE OF r
                """, logger).first else { return .notFound }
            let (userID, hash, active, expires, state) = try row.decode((String, String, Bool, Double, String?).self)
            if expires <= now.timeIntervalSince1970 {
                try await c.rows("DELETE FROM registrations WHERE mpin_id = \(mpinID)", logger)
                return .notFound
            }
            // A wrong regOTT is refused and changes nothing (as SQLiteStorage).
            guard hash == regOTTHash else { return .regOTTMismatch }
            guard active, UserStatePolicy.mayAct(state) else { return .notActive }
            try await c.rows("DELETE FROM registrations WHERE mpin_id = \(mpinID)", logger)
            try await c.rows("""
                INSERT INTO identities (mpin_id, user_id, attempts, created) VALUES (\(mpinID), \(userID), 0, \(now.timeIntervalSince1970))
                ON CONFLICT DO NOTHING
                """, logger)
            return .issued(userID: userID)
        }
    }

    func permitStatus(mpinID: String) async throws -> PermitOutcome {
        let rows = try await run("""
            SELECT u.state FROM identities i JOIN users u ON u.user_id = i.user_id WHERE i.mpin_id = \(mpinID)
            """, durable: false)
        let state = try rows.first?.decode(String.self)
        return UserStatePolicy.permit(state)
    }

    // MARK: Authentication

    @discardableResult
    func saveAuth(authOTTHash: String, mpinID: String, success: Bool, wid: String, otp: String?,
                  expires: Date, now: Date) async throws -> Bool {
        let t = now.timeIntervalSince1970, e = expires.timeIntervalSince1970
        // One statement each: the condition on the access number or session and the insert are
        // one transaction.
        if wid.hasPrefix(AccessCode.storedPrefix) {
            // An access code (MFA.md §6): its session must be live, not finished, and, once a
            // user was noted, be this identity's user.
            let accessCodeHash = String(wid.dropFirst(AccessCode.storedPrefix.count))
            return try await !run("""
                INSERT INTO auth (auth_ott_hash, mpin_id, success, wid, otp, expires)
                SELECT \(authOTTHash), \(mpinID), \(success), \(wid), \(otp), \(e)
                WHERE EXISTS (SELECT 1 FROM mfa_sessions WHERE access_code_hash = \(accessCodeHash) AND expires > \(t)
                  AND state IN ('new', 'wid', 'user')
                  AND (user_id IS NULL OR user_id = (SELECT user_id FROM identities WHERE mpin_id = \(mpinID))))
                \(unescaped: Self.authUpsert)
                """, durable: false).isEmpty
        } else if !wid.isEmpty {
            return try await !run("""
                INSERT INTO auth (auth_ott_hash, mpin_id, success, wid, otp, expires)
                SELECT \(authOTTHash), \(mpinID), \(success), \(wid), \(otp), \(e)
                WHERE EXISTS (SELECT 1 FROM access_numbers WHERE wid = \(wid) AND expires > \(t) AND auth_ott IS NULL)
                \(unescaped: Self.authUpsert)
                """, durable: false).isEmpty
        }
        // A direct login's record, and in the same statement (the same round trip) its identity
        // as it stands, which this node keeps for its final step (`evaluate`, `pendingAuth`).
        let saved = PostgresLoginStatements.SaveDirectAuth(authOTTHash: authOTTHash, mpinID: mpinID, success: success,
                                                           otp: otp, expires: e)
        let savedRow: PostgresLoginStatements.SaveDirectAuth.Row?
        do {
            savedRow = try await firstRow(of: saved)
        } catch {
            // A prepared statement can fail on one connection for good (its preparation broke,
            // a schema change invalidated its plan, a pooler dropped it): the login must not.
            // The plain statement does the same write (an upsert, safe to repeat), without the
            // identity: the final step then locks and reads the rows.
            logger.warning("prepared statement failed; pass 2 saved by the plain one",
                           metadata: ["statement": "save-direct-auth", "sqlstate": "\(Self.sqlState(error))"])
            return try await !run("""
                INSERT INTO auth (auth_ott_hash, mpin_id, success, wid, otp, expires)
                VALUES (\(authOTTHash), \(mpinID), \(success), \(wid), \(otp), \(e))
                \(unescaped: Self.authUpsert)
                """, durable: false).isEmpty
        }
        guard let (userID, attempts, blockedAt, state) = savedRow else { return false }
        var identity: IdentityCounter? = nil
        if let userID, let attempts {
            identity = IdentityCounter(userID: userID, attempts: attempts, blockedAt: blockedAt, userState: state)
        }
        let record = AuthRecord(mpinID: mpinID, success: success, wid: "", otp: otp, priorStatus: nil, expires: e)
        _ = pendingAuth.save(authOTTHash: authOTTHash, .init(record: record, identity: identity), now: now)
        return true
    }

    /// `INSERT OR REPLACE` of a pass-2 record: a new record under an existing authOTT hash
    /// replaces it whole.
    static let authUpsert = """
        ON CONFLICT (auth_ott_hash) DO UPDATE SET mpin_id = EXCLUDED.mpin_id, success = EXCLUDED.success,
          wid = EXCLUDED.wid, otp = EXCLUDED.otp, status = NULL, browser_ready = FALSE, logout_user = NULL,
          logout_token = NULL, expires = EXCLUDED.expires
        RETURNING 1
        """

    /// The final step: `FinalStepPlan.decide` on the record and its identity, applied in one
    /// transaction. On the node that saved the record the plan is first decided on what its
    /// pass 2 read (`pendingAuth`), and a plan of the one shape that fits a single statement
    /// (`FinalStepPlan.singleUse`) is applied by `UseDirectAuth` only if the rows still hold
    /// what was read; otherwise, and on any other node, the rows are locked and read, the plan
    /// decided on them and applied write by write.
    func evaluate(authOTTHash: String, flow: AuthFlow, maxAttempts: Int, now: Date,
                  session: NewSession?, logoutData: LogoutData?) async throws -> AuthVerdict? {
        if case .direct = flow, let pending = pendingAuth.take(authOTTHash: authOTTHash, now: now), let identity = pending.identity {
            let plan = FinalStepPlan.decide(record: pending.record, identity: identity, flow: flow, maxAttempts: maxAttempts,
                                            now: now, session: session, logoutData: logoutData)
            if let singleUse = plan.singleUse {
                do {
                    let use = PostgresLoginStatements.UseDirectAuth(authOTTHash: authOTTHash, record: pending.record,
                                                                    identity: identity, singleUse: singleUse)
                    if try await firstRow(of: use) != nil {
                        singleStatementVerdicts.add(1, ordering: .relaxed)
                        return plan.verdict
                    }
                } catch {
                    // As for pass 2's save: the locked path below decides instead. It is safe
                    // after any failure here, because it locks and reads the record again (nil
                    // if it was used), so the record still gets one verdict.
                    logger.warning("prepared statement failed; the final step takes the locked path",
                                   metadata: ["statement": "use-direct-auth", "sqlstate": "\(Self.sqlState(error))"])
                }
            }
        }
        let logger = logger
        // Not durable unless a wrong PIN is counted (`apply`).
        return try await transaction(durable: false) { c in
            // The authOTT's row and its identity's row, locked (one round trip): a concurrent
            // evaluation of the authOTT (any node) waits, then finds it deleted or marked, and
            // parallel attempts of the identity (any node) read its counter one after the other.
            let record: AuthRecord
            let identity: IdentityCounter?
            if let row = try await c.rows("""
                SELECT a.mpin_id, a.success, a.wid, a.otp, a.status, a.expires, i.user_id, i.attempts, i.blocked_at, u.state
                FROM auth a JOIN identities i ON i.mpin_id = a.mpin_id LEFT JOIN users u ON u.user_id = i.user_id
                WHERE a.auth_ott_hash = \(authOTTHash) FOR UPDATE OF a, i
                """, logger).first {
                let r = try row.decode((String, Bool, String, String?, Int?, Double, String, Int, Double?, String?).self)
                record = AuthRecord(mpinID: r.0, success: r.1, wid: r.2, otp: r.3, priorStatus: r.4, expires: r.5)
                identity = IdentityCounter(userID: r.6, attempts: r.7, blockedAt: r.8, userState: r.9)
            } else {
                // No such authOTT, or one of an identity that is not (or no longer) issued.
                guard let row = try await c.rows("""
                    SELECT mpin_id, success, wid, otp, status, expires FROM auth WHERE auth_ott_hash = \(authOTTHash) FOR UPDATE
                    """, logger).first else { return nil }
                let r = try row.decode((String, Bool, String, String?, Int?, Double).self)
                record = AuthRecord(mpinID: r.0, success: r.1, wid: r.2, otp: r.3, priorStatus: r.4, expires: r.5)
                identity = try await c.rows("""
                    SELECT i.user_id, i.attempts, i.blocked_at, u.state FROM identities i LEFT JOIN users u ON u.user_id = i.user_id
                    WHERE i.mpin_id = \(record.mpinID) FOR UPDATE OF i
                    """, logger).first.map { row in
                    let r = try row.decode((String, Int, Double?, String?).self)
                    return IdentityCounter(userID: r.0, attempts: r.1, blockedAt: r.2, userState: r.3)
                }
            }
            let plan = FinalStepPlan.decide(record: record, identity: identity, flow: flow, maxAttempts: maxAttempts, now: now,
                                            session: session, logoutData: logoutData)
            return try await plan.execute { write in
                try await Self.apply(write, c, authOTTHash: authOTTHash, mpinID: record.mpinID, now: now, logger: logger)
            }
        }
    }

    /// One write of the final step (`FinalStepPlan`) in PostgreSQL's SQL, on the rows locked above.
    private static func apply(_ write: FinalStepWrite, _ c: PostgresConnection, authOTTHash: String, mpinID: String,
                              now: Date, logger: Logger) async throws -> FinalStepPlan.Applied {
        switch write {
        case .deleteAuth:
            try await c.rows("DELETE FROM auth WHERE auth_ott_hash = \(authOTTHash)", logger)
        case .markBrowserReady:
            let marked = try await c.rows("""
                UPDATE auth SET browser_ready = TRUE WHERE auth_ott_hash = \(authOTTHash) AND NOT browser_ready RETURNING 1
                """, logger)
            return marked.isEmpty ? .refused : .done
        case .openSession(let session, let userID):
            try await insertSession(c, session, userID: userID, logger: logger)
        case .recordLogout(let userID, let token):
            try await c.rows("""
                UPDATE auth SET logout_user = \(userID), logout_token = \(token) WHERE auth_ott_hash = \(authOTTHash)
                """, logger)
        case .count(let update):
            // A counted wrong PIN survives any crash.
            if update.attempts > 0 { try await c.rows(durableCommit, logger) }
            try await c.rows("""
                UPDATE identities SET attempts = \(update.attempts), blocked_at = \(update.blockedAt) WHERE mpin_id = \(mpinID)
                """, logger)
        case .claimAccessNumber(let authOTT, let wid):
            // The access number's row lock makes a concurrent approval (any node) find it taken.
            let taken = try await c.rows("""
                UPDATE access_numbers SET auth_ott = \(authOTT) WHERE wid = \(wid) AND auth_ott IS NULL RETURNING 1
                """, logger)
            return taken.isEmpty ? .refused : .done
        case .recordStatus(let status):
            try await c.rows("UPDATE auth SET status = \(status) WHERE auth_ott_hash = \(authOTTHash)", logger)
        case .authorize(let accessCodeHash, let userID, let code):
            return try await authorize(c, accessCodeHash: accessCodeHash, userID: userID, code: code, now: now, logger: logger)
                .map { .granted($0) } ?? .refused
        }
        return .done
    }

    private static func insertSession(_ c: PostgresConnection, _ session: NewSession, userID: String, logger: Logger) async throws {
        try await c.rows("""
            INSERT INTO sessions (token_hash, user_id, expires) VALUES (\(session.tokenHash), \(userID), \(session.expires.timeIntervalSince1970))
            ON CONFLICT (token_hash) DO UPDATE SET user_id = EXCLUDED.user_id, expires = EXCLUDED.expires
            """, logger)
    }

    func browserReady(authOTTHash: String) async throws -> Bool {
        let rows = try await run("""
            SELECT browser_ready FROM auth WHERE auth_ott_hash = \(authOTTHash) AND logout_token IS NOT NULL
            """, durable: false)
        return try rows.first?.decode(Bool.self) ?? false
    }

    func finishMobile(authOTTHash: String) async throws -> MobileLogout? {
        let logger = logger
        return try await transaction(durable: false) { c in
            guard let row = try await c.rows("""
                DELETE FROM auth WHERE auth_ott_hash = \(authOTTHash) RETURNING wid, logout_user, logout_token
                """, logger).first else { return nil }
            let (wid, user, token) = try row.decode((String, String?, String?).self)
            try await c.rows("DELETE FROM access_numbers WHERE wid = \(wid)", logger)
            guard let user, let token else { return nil }
            return MobileLogout(userID: user, token: token)
        }
    }

    // MARK: Access numbers and sessions

    func createAccessNumber(wid: String, webOTTHash: String, expires: Date, now: Date, description: String) async throws -> Bool {
        let logger = logger
        return try await transaction(durable: false) { c in
            try await c.rows("DELETE FROM access_numbers WHERE expires <= \(now.timeIntervalSince1970)", logger)
            return try await !c.rows("""
                INSERT INTO access_numbers (wid, web_ott_hash, expires, description)
                VALUES (\(wid), \(webOTTHash), \(expires.timeIntervalSince1970), \(description))
                ON CONFLICT DO NOTHING RETURNING 1
                """, logger).isEmpty
        }
    }

    func accessNumberDescription(wid: String, now: Date) async throws -> (description: String, expires: Date)? {
        let rows = try await run("""
            SELECT description, expires FROM access_numbers WHERE wid = \(wid) AND expires > \(now.timeIntervalSince1970)
              AND auth_ott IS NULL
            """, durable: false)
        guard let row = rows.first else { return nil }
        let (description, expires) = try row.decode((String, Double).self)
        return (description, Date(timeIntervalSince1970: expires))
    }

    func accessNumberRequester(wid: String) async throws -> (webOTTHash: String, description: String)? {
        let rows = try await run("""
            SELECT web_ott_hash, description FROM access_numbers WHERE wid = \(wid) AND expires > \(Date().timeIntervalSince1970)
            """, durable: false)
        return try rows.first.map { try $0.decode((String, String).self) }
    }

    func webLogin(accessNumber: String, now: Date) async throws -> String? {
        guard let row = try await run("""
            SELECT web_ott_hash FROM access_numbers WHERE wid = \(accessNumber) AND expires > \(now.timeIntervalSince1970)
            """, durable: false).first else { return nil }
        let stored = try row.decode(String.self)
        return stored.hasPrefix(AccessCode.storedPrefix) ? stored : nil
    }

    func webLoginDescription(accessCodeHash: String, now: Date) async throws -> String? {
        let stored = AccessCode.storedPrefix + accessCodeHash
        guard let row = try await run("""
            SELECT description FROM access_numbers WHERE web_ott_hash = \(stored) AND expires > \(now.timeIntervalSince1970)
            """, durable: false).first else { return nil }
        return try row.decode(String.self)
    }

    func pollAccessNumber(webOTTHash: String, now: Date) async throws -> String? {
        let rows = try await run("""
            SELECT auth_ott FROM access_numbers WHERE web_ott_hash = \(webOTTHash) AND expires > \(now.timeIntervalSince1970)
            """, durable: false)
        return try rows.first?.decode(String?.self) ?? nil
    }

    func endSession(tokenHash: String, userID: String, now: Date) async throws -> Bool {
        try await !run("""
            DELETE FROM sessions WHERE token_hash = \(tokenHash) AND user_id = \(userID) AND expires > \(now.timeIntervalSince1970)
            RETURNING 1
            """, durable: false).isEmpty
    }

    func purgeExpired(now: Date) async throws {
        pendingAuth.purgeExpired(now: now)
        let t = now.timeIntervalSince1970, logger = logger
        try await transaction(durable: false) { c in
            for table in StorageSchema.expiringTables {
                try await c.rows("DELETE FROM \(unescaped: table) WHERE expires <= \(t)", logger)
            }
        }
    }
}

extension PostgresConnection {
    /// One statement of a transaction, read to its end; its rows.
    @discardableResult
    func rows(_ query: PostgresQuery, _ logger: Logger) async throws -> [PostgresRow] {
        try await self.query(query, logger: logger).collect()
    }
}

extension StorageBackend {
    /// How many final steps this backend applied in one statement, decided on what its node's
    /// pass 2 read (PostgreSQL, `evaluate`); nil for a backend that decides every final step
    /// inside its one transaction (SQLite).
    package var singleStatementFinalSteps: Int? {
        (self as? PostgresStorage)?.singleStatementVerdicts.load(ordering: .relaxed)
    }
}
