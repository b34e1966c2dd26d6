package import Foundation
package import GRDB
package import ServiceLifecycle
package import MPinWire

/// The server's state in one SQLite file (GRDB), for one machine (`PostgresStorage` is the
/// same contract on PostgreSQL, for several). Every multi-step change is one transaction,
/// so concurrent requests and the `user` command can share the file safely. Secrets that are
/// only ever compared (regOTT, activation codes, authOTT, webOTT, session tokens) are stored
/// as SHA-256 hashes. Three values must be handed out again and are stored as they are, for
/// their short lives: an access-number login's authOTT (for the polling browser), its logout
/// token (for the waiting mobile) and a pass-2 OTP (of an access-number login: a pass-2 result
/// without one waits in memory, `PendingAuthStore`, unless that is full); the file, like its
/// directory, is owner-only.
package final class SQLiteStorage: StorageBackend {
    /// The file, in WAL mode: one writer connection and a few readers, so that a read never
    /// waits for a write (nor for another process's write lock).
    package let pool: DatabasePool
    /// Pass-2 results without an access number, until the final step consumes them: the file
    /// has one server, so they need not be written (one write transaction per login, not two).
    let pendingAuth = PendingAuthStore()

    /// Opens (creating and migrating if needed) the database at `path`, file mode 0600.
    /// `busyTimeout`: how long a write waits for another process's lock (on GRDB's writer
    /// thread, never on the caller's).
    package init(path: String, busyTimeout: Double = 10) throws {
        var config = Configuration()
        config.busyMode = .timeout(busyTimeout)
        // WAL + NORMAL: a committed transaction survives a process crash (kill -9); only a
        // power loss may drop the last commits. Saves an fsync per request.
        config.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        let existed = FileManager.default.fileExists(atPath: path)
        if !existed { _ = FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) }
        pool = try DatabasePool(path: path, configuration: config)
        try SQLiteStorage.migrate(pool, path: path)
    }

    /// The schema version this program knows: the number of its migrations. The file records
    /// its version in `PRAGMA user_version` (and GRDB the applied migrations in
    /// `grdb_migrations`); a file a newer mpin-server migrated is refused, naming both versions,
    /// before anything is changed.
    static var schemaVersion: Int { migrator.migrations.count }

    private static func migrate(_ pool: DatabasePool, path: String) throws {
        let known = schemaVersion
        let (recorded, found): (Int, Int) = try pool.read { db in
            let userVersion = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
            let applied = try migrator.appliedIdentifiers(db)
            let superseded = try migrator.hasBeenSuperseded(db)
            return (userVersion, superseded ? max(userVersion, applied.count, known + 1) : max(userVersion, applied.count))
        }
        if found > known { throw SetupError.schemaTooNew(database: path, found: found, known: known) }
        try migrator.migrate(pool)
        if recorded != known { try pool.write { db in try db.execute(sql: "PRAGMA user_version = \(known)") } }
    }

    // Transactions run on GRDB's threads (its async API), never on the caller's: the caller is
    // a request on a NIO event loop, which must not block (swift-nio's rule), and a write may
    // wait up to `busyTimeout` for another process's lock (`mpin-server user …`, a checkpoint).
    // A write waits behind that lock; a read (WAL) does not.

    /// One write transaction on the writer connection.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await pool.write(body)
    }

    /// One read transaction on a reader connection: the last committed state, without waiting
    /// for a write.
    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await pool.read(body)
    }

    /// A read of the schema on a reader connection (`/health`): whether the file answers. A
    /// lock held elsewhere delays writes, not the probe.
    package func healthCheck() async throws {
        _ = try await read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") }
    }


    /// Nothing runs beside an SQLite file.
    package var service: (any Service)? { nil }

    /// Nothing to close: the pool closes the file when it goes.
    package func close() async {}

    private static var migrator: DatabaseMigrator {
        var m = DatabaseMigrator()
        m.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE users (
                    user_id TEXT PRIMARY KEY NOT NULL,
                    state TEXT NOT NULL,                 -- pending | active | revoked
                    activation_code_hash TEXT,
                    created REAL NOT NULL);
                CREATE TABLE registrations (
                    mpin_id TEXT PRIMARY KEY NOT NULL,   -- lower-case hex
                    user_id TEXT NOT NULL,
                    reg_ott_hash TEXT NOT NULL,
                    activate_key_hash TEXT NOT NULL,
                    active INTEGER NOT NULL,
                    expires REAL NOT NULL);
                CREATE INDEX registrations_user ON registrations(user_id);
                CREATE TABLE identities (
                    mpin_id TEXT PRIMARY KEY NOT NULL,
                    user_id TEXT NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    blocked_at REAL,
                    created REAL NOT NULL);
                CREATE INDEX identities_user ON identities(user_id);
                CREATE TABLE pass1 (
                    mpin_id TEXT PRIMARY KEY NOT NULL,
                    u BLOB NOT NULL, ut BLOB NOT NULL, y BLOB NOT NULL,
                    expires REAL NOT NULL);
                CREATE TABLE auth (
                    auth_ott_hash TEXT PRIMARY KEY NOT NULL,
                    mpin_id TEXT NOT NULL,
                    success INTEGER NOT NULL,
                    wid TEXT NOT NULL,
                    otp TEXT,
                    status INTEGER,
                    browser_ready INTEGER NOT NULL DEFAULT 0,
                    logout_user TEXT, logout_token TEXT,
                    expires REAL NOT NULL);
                CREATE TABLE access_numbers (
                    wid TEXT PRIMARY KEY NOT NULL,
                    web_ott_hash TEXT NOT NULL UNIQUE,
                    auth_ott TEXT,
                    expires REAL NOT NULL);
                CREATE TABLE sessions (
                    token_hash TEXT PRIMARY KEY NOT NULL,
                    user_id TEXT NOT NULL,
                    expires REAL NOT NULL);
                """)
        }
        m.registerMigration("v2: pass-1 state moved to memory") { db in
            try db.execute(sql: "DROP TABLE pass1")
        }
        m.registerMigration("v3: MFA applications") { db in
            // MFA.md §11. Only the secret's SHA-256 is kept.
            try db.execute(sql: """
                CREATE TABLE apps (
                    client_id TEXT PRIMARY KEY NOT NULL,
                    name TEXT NOT NULL,
                    redirect_uri TEXT NOT NULL,
                    logo_url TEXT NOT NULL,
                    secret_hash TEXT NOT NULL,
                    created REAL NOT NULL);
                """)
        }
        m.registerMigration("v4: MFA sessions and authorization codes") { db in
            // MFA.md §11. Codes and webOTTs are kept as SHA-256 hashes; `redirect_url` holds
            // the one value handed out again (to the polling browser), and only until then.
            try db.execute(sql: """
                CREATE TABLE mfa_sessions (
                    access_code_hash TEXT PRIMARY KEY NOT NULL,
                    web_ott_hash TEXT NOT NULL UNIQUE,
                    client_id TEXT NOT NULL,
                    redirect_uri TEXT NOT NULL,
                    oauth_state TEXT NOT NULL,
                    nonce TEXT,
                    code_challenge TEXT NOT NULL,
                    preroll_id TEXT NOT NULL,
                    state TEXT NOT NULL,                 -- new | wid | user | authenticated | done | aborted
                    user_id TEXT,
                    redirect_url TEXT,
                    expires REAL NOT NULL);
                CREATE INDEX mfa_sessions_client ON mfa_sessions(client_id);
                CREATE TABLE authz_codes (
                    code_hash TEXT PRIMARY KEY NOT NULL,
                    client_id TEXT NOT NULL,
                    redirect_uri TEXT NOT NULL,
                    code_challenge TEXT NOT NULL,
                    nonce TEXT,
                    user_id TEXT NOT NULL,
                    auth_time REAL NOT NULL,
                    used INTEGER NOT NULL DEFAULT 0,
                    expires REAL NOT NULL);
                CREATE INDEX authz_codes_client ON authz_codes(client_id);
                """)
        }
        m.registerMigration("v5: registration codes") { db in
            // MFA.md §8: a code issued to an authenticated device, kept as its SHA-256 with the
            // user it was issued to, single use.
            try db.execute(sql: """
                CREATE TABLE reg_codes (
                    code_hash TEXT PRIMARY KEY NOT NULL,
                    user_id TEXT NOT NULL,
                    expires REAL NOT NULL)
                """)
        }
        m.registerMigration("v5-device: access-number descriptions") { db in
            // PROTOCOL.md §5.7: what asked for the access number, shown to the approving device.
            try db.execute(sql: "ALTER TABLE access_numbers ADD COLUMN description TEXT NOT NULL DEFAULT ''")
        }
        registerDVSMigration(&m)
        m.registerMigration("v7: who started a registration") { db in
            // docs/SECURITY.md §6.2: the admin activates one registration by name, and sees when,
            // from where and with what device name each was started.
            try db.execute(sql: "ALTER TABLE registrations ADD COLUMN created REAL NOT NULL DEFAULT 0")
            try db.execute(sql: "ALTER TABLE registrations ADD COLUMN device_name TEXT NOT NULL DEFAULT ''")
            try db.execute(sql: "ALTER TABLE registrations ADD COLUMN source TEXT NOT NULL DEFAULT ''")
        }
        m.registerMigration("v8: ID token algorithm per application") { db in
            // docs/MFA.md §7.1: RS256 beside ES256. Applications registered before keep ES256, which
            // their relying parties were told; `app add` names the algorithm of new ones.
            try db.execute(sql: "ALTER TABLE apps ADD COLUMN id_token_alg TEXT NOT NULL DEFAULT 'ES256'")
        }
        // Every change since is written once for both backends.
        for migration in StorageSchema.sharedMigrations {
            m.registerMigration(migration.sqliteIdentifier) { db in
                for statement in migration.changes.flatMap({ $0.sql(.sqlite) }) { try db.execute(sql: statement) }
            }
        }
        return m
    }

    // MARK: Registration

    /// The stored registration's user and whether the given regOTT hash matches, or nil.
    package func registrationMatches(mpinID: String, regOTTHash: String, now: Date) async throws -> Bool? {
        try await read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT reg_ott_hash, expires FROM registrations WHERE mpin_id = ?",
                                             arguments: [mpinID]) else { return nil }
            let expires: Double = row["expires"]
            guard expires > now.timeIntervalSince1970 else { return nil }
            let h: String = row["reg_ott_hash"]
            return h == regOTTHash
        }
    }

    /// Stores (or replaces) a registration record and decides whether it is active.
    package func saveRegistration(mpinID: String, userID: String, regOTTHash: String, activateKeyHash: String,
                          expires: Date, mode: VerificationMode, activateCodeHash: String?, regCodeHash: String?, details: RegistrationDetails, now: Date) async throws -> RegistrationOutcome {
        try await write { db in
            let user = try Row.fetchOne(db, sql: "SELECT state, activation_code_hash FROM users WHERE user_id = ?",
                                        arguments: [userID]).map { RegistrationPolicy.User(state: $0["state"], activationCodeHash: $0["activation_code_hash"]) }
            if !UserStatePolicy.mayRegister(user?.state) { return .refused }
            var mode = mode
            var replaced = false
            if let regCodeHash {
                // A registration code of this user, live and unused, stands for the identity's
                // verification (MFA.md §8); it is used up here, in the registration's transaction.
                try db.execute(sql: "DELETE FROM reg_codes WHERE code_hash = ? AND user_id = ? AND expires > ?",
                               arguments: [regCodeHash, userID, now.timeIntervalSince1970])
                guard db.changesCount == 1 else {
                    return .regCodeRefused(wrongCodes: try Self.countWrongRegCode(db, userID: userID, now: now))
                }
                // The right code: the count of wrong ones starts again on the user's other codes.
                try db.execute(sql: "UPDATE reg_codes SET failures = 0 WHERE user_id = ?", arguments: [userID])
                mode = .auto
                // The identity it replaces (the same user's, never this one) goes with it.
                if !details.replaces.isEmpty, details.replaces != mpinID {
                    try db.execute(sql: "DELETE FROM identities WHERE mpin_id = ? AND user_id = ?",
                                   arguments: [details.replaces, userID])
                    replaced = db.changesCount == 1
                }
            }
            if RegistrationPolicy.refusesActivationCode(user: user, mode: mode, activateCodeHash: activateCodeHash) {
                return .activationCodeRefused
            }
            let (active, userWrite) = RegistrationPolicy.decide(user: user, mode: mode, activateCodeHash: activateCodeHash)
            switch userWrite {
            case .none: break
            case .createPending:
                try db.execute(sql: "INSERT INTO users (user_id, state, created) VALUES (?, 'pending', ?)",
                               arguments: [userID, now.timeIntervalSince1970])
            case .upsertActive:
                try db.execute(sql: """
                    INSERT INTO users (user_id, state, created) VALUES (?, 'active', ?)
                    ON CONFLICT(user_id) DO UPDATE SET state = 'active'
                    """, arguments: [userID, now.timeIntervalSince1970])
            case .activateUsingCode:
                try db.execute(sql: "UPDATE users SET state = 'active', activation_code_hash = NULL WHERE user_id = ?",
                               arguments: [userID])
            }
            // Sent again: the first start time, expiry, device name and address stay.
            try db.execute(sql: """
                INSERT INTO registrations (mpin_id, user_id, reg_ott_hash, activate_key_hash, active, expires,
                                           created, device_name, source)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(mpin_id) DO UPDATE SET reg_ott_hash = excluded.reg_ott_hash,
                  activate_key_hash = excluded.activate_key_hash, active = excluded.active OR registrations.active,
                  expires = MIN(registrations.expires, excluded.expires)
                WHERE registrations.user_id = excluded.user_id
                """, arguments: [mpinID, userID, regOTTHash, activateKeyHash, active, expires.timeIntervalSince1970,
                                 now.timeIntervalSince1970, details.deviceName, details.source])
            // The bounds per identity and per address: the oldest beyond them go.
            try db.execute(sql: """
                DELETE FROM registrations WHERE mpin_id IN (SELECT mpin_id FROM registrations WHERE user_id = ?
                                                            ORDER BY created DESC, rowid DESC LIMIT -1 OFFSET ?)
                """, arguments: [userID, RegistrationPolicy.maxPendingPerUser])
            if !details.source.isEmpty {
                try db.execute(sql: """
                    DELETE FROM registrations WHERE mpin_id IN (SELECT mpin_id FROM registrations WHERE source = ?
                                                                ORDER BY created DESC, rowid DESC LIMIT -1 OFFSET ?)
                    """, arguments: [details.source, RegistrationPolicy.maxPendingPerSource])
            }
            return .stored(active: active, replaced: replaced)
        }
    }

    /// Counts a wrong registration code against the user's live codes (`WrongRegCodeCounter`),
    /// in the refusing transaction; the count now standing (0 when the user has no live code).
    private static func countWrongRegCode(_ db: Database, userID: String, now: Date) throws -> Int {
        let row = try Row.fetchOne(db, sql: """
            SELECT COALESCE(MAX(failures), 0) AS failures, COUNT(*) AS live FROM reg_codes WHERE user_id = ? AND expires > ?
            """, arguments: [userID, now.timeIntervalSince1970])
        guard let failures = WrongRegCodeCounter.counted(failures: row?["failures"] ?? 0, liveCodes: row?["live"] ?? 0) else {
            return 0
        }
        try db.execute(sql: "UPDATE reg_codes SET failures = ? WHERE user_id = ?", arguments: [failures, userID])
        return failures
    }

    /// RPA activation (`POST /user/{mpinId}`): true when a live registration with this key exists.
    package func activateRegistration(mpinID: String, activateKeyHash: String, now: Date) async throws -> Bool {
        try await write { db in
            try db.execute(sql: """
                UPDATE registrations SET active = 1 WHERE mpin_id = ? AND activate_key_hash = ? AND expires > ?
                """, arguments: [mpinID, activateKeyHash, now.timeIntervalSince1970])
            return db.changesCount > 0
        }
    }

    /// The signature step: checks the registration and, when it is active, consumes it and
    /// records the mpinId as an issued identity. A regOTT mismatch deletes the record.
    package func consumeRegistration(mpinID: String, regOTTHash: String, now: Date) async throws -> ShareOutcome {
        try await write { db in
            guard let row = try Row.fetchOne(db, sql: """
                SELECT r.user_id, r.reg_ott_hash, r.active, r.expires, u.state FROM registrations r
                LEFT JOIN users u ON u.user_id = r.user_id WHERE r.mpin_id = ?
                """, arguments: [mpinID]) else { return .notFound }
            let expires: Double = row["expires"]
            if expires <= now.timeIntervalSince1970 {
                try db.execute(sql: "DELETE FROM registrations WHERE mpin_id = ?", arguments: [mpinID])
                return .notFound
            }
            let h: String = row["reg_ott_hash"]
            // A wrong regOTT is refused and changes nothing: anyone who knows a pending mpinId
            // could otherwise delete someone else's registration (docs/SECURITY.md §6.13).
            guard h == regOTTHash else { return .regOTTMismatch }
            let active: Bool = row["active"]
            let state: String? = row["state"]
            guard active, UserStatePolicy.mayAct(state) else { return .notActive }
            let userID: String = row["user_id"]
            try db.execute(sql: "DELETE FROM registrations WHERE mpin_id = ?", arguments: [mpinID])
            try db.execute(sql: """
                INSERT OR IGNORE INTO identities (mpin_id, user_id, attempts, created) VALUES (?, ?, 0, ?)
                """, arguments: [mpinID, userID, now.timeIntervalSince1970])
            return .issued(userID: userID)
        }
    }

    /// Whether a time permit may be issued: the mpinId must be an issued identity of a user
    /// that exists and is not revoked.
    package func permitStatus(mpinID: String) async throws -> PermitOutcome {
        try await read { db in
            let state = try String.fetchOne(db.cachedStatement(sql: """
                SELECT u.state FROM identities i JOIN users u ON u.user_id = i.user_id WHERE i.mpin_id = ?
                """), arguments: [mpinID])
            return UserStatePolicy.permit(state)
        }
    }

    // MARK: Authentication

    /// Stores a pass-2 result under its authOTT hash. With an access number (`wid` non-empty)
    /// the result is stored only if that access number is live; returns whether it was stored.
    @discardableResult
    package func saveAuth(authOTTHash: String, mpinID: String, success: Bool, wid: String, otp: String?,
                  expires: Date, now: Date) async throws -> Bool {
        // Only the final step of this server reads a record without an access number: it waits
        // in memory (written to the file only if the memory is full).
        if wid.isEmpty {
            let record = AuthRecord(mpinID: mpinID, success: success, wid: "", otp: otp, priorStatus: nil,
                                    expires: expires.timeIntervalSince1970)
            if pendingAuth.save(authOTTHash: authOTTHash, .init(record: record), now: now) { return true }
        }
        return try await write { db in
            if wid.hasPrefix(AccessCode.storedPrefix) {
                // An access code (MFA.md §6): its session must be live, not finished, and, once
                // a user was noted, be this identity's user.
                let usable = try Bool.fetchOne(db, sql: """
                    SELECT 1 FROM mfa_sessions WHERE access_code_hash = ? AND expires > ?
                      AND state IN ('new', 'wid', 'user')
                      AND (user_id IS NULL OR user_id = (SELECT user_id FROM identities WHERE mpin_id = ?))
                    """, arguments: [String(wid.dropFirst(AccessCode.storedPrefix.count)), now.timeIntervalSince1970,
                                     mpinID]) ?? false
                guard usable else { return false }
            } else if !wid.isEmpty {
                let live = try Bool.fetchOne(db, sql: "SELECT 1 FROM access_numbers WHERE wid = ? AND expires > ? AND auth_ott IS NULL",
                                             arguments: [wid, now.timeIntervalSince1970]) ?? false
                guard live else { return false }
            }
            try db.cachedStatement(sql: """
                INSERT OR REPLACE INTO auth (auth_ott_hash, mpin_id, success, wid, otp, expires) VALUES (?, ?, ?, ?, ?, ?)
                """).execute(arguments: [authOTTHash, mpinID, success, wid, otp, expires.timeIntervalSince1970])
            return true
        }
    }

    /// Evaluates a stored pass-2 result once, applying the wrong-PIN counter in the same
    /// transaction (so parallel attempts neither lose increments nor block twice).
    /// Returns nil when no usable record exists. The verdict and the writes are
    /// `FinalStepPlan.decide`'s, on the record and the identity as the transaction reads them.
    package func evaluate(authOTTHash: String, flow: AuthFlow, maxAttempts: Int, now: Date,
                  session: NewSession?, logoutData: LogoutData?) async throws -> AuthVerdict? {
        if case .direct = flow, let pending = pendingAuth.take(authOTTHash: authOTTHash, now: now) {
            // The record was in memory: taken, it is used up, and the plan's `.deleteAuth` has
            // nothing left to delete in the file.
            let record = pending.record
            if session == nil {
                // Without a session to open the plan may write nothing else (a right PIN on a
                // clean counter): decided on a reader, such a plan needs no write transaction,
                // so it does not queue behind the writer (nor behind another process's lock).
                // Its verdict is the one a write transaction at the moment of the read gives.
                let identity = try await read { db in try Self.identityCounter(db, mpinID: record.mpinID) }
                let plan = FinalStepPlan.decide(record: record, identity: identity, flow: flow, maxAttempts: maxAttempts,
                                                now: now, session: session, logoutData: logoutData)
                if plan.writesOnlyTheRecord { return plan.verdict }
            }
            return try await write { db in
                try Self.finalStep(db, record: record, inFile: false, authOTTHash: authOTTHash, flow: flow,
                                   maxAttempts: maxAttempts, now: now, session: session, logoutData: logoutData)
            }
        }
        return try await write { db in
            guard let row = try Row.fetchOne(db.cachedStatement(sql: """
                SELECT mpin_id, success, wid, otp, status, expires FROM auth WHERE auth_ott_hash = ?
                """), arguments: [authOTTHash]) else { return nil }
            let record = AuthRecord(mpinID: row["mpin_id"], success: row["success"], wid: row["wid"], otp: row["otp"],
                                    priorStatus: row["status"], expires: row["expires"])
            return try Self.finalStep(db, record: record, inFile: true, authOTTHash: authOTTHash, flow: flow,
                                      maxAttempts: maxAttempts, now: now, session: session, logoutData: logoutData)
        }
    }

    /// The final step on `record` inside the write transaction: the identity read, the plan
    /// decided and its writes applied. `inFile`: the record is a row of `auth` (else it was
    /// taken from memory, and deleting it writes nothing).
    private static func finalStep(_ db: Database, record: AuthRecord, inFile: Bool, authOTTHash: String, flow: AuthFlow,
                                  maxAttempts: Int, now: Date, session: NewSession?,
                                  logoutData: LogoutData?) throws -> AuthVerdict? {
        let identity = try identityCounter(db, mpinID: record.mpinID)
        let plan = FinalStepPlan.decide(record: record, identity: identity, flow: flow, maxAttempts: maxAttempts, now: now,
                                        session: session, logoutData: logoutData)
        return try plan.execute { write in
            if !inFile, write == .deleteAuth { return .done }
            return try apply(write, db, authOTTHash: authOTTHash, mpinID: record.mpinID, now: now)
        }
    }

    /// One write of the final step (`FinalStepPlan`) in SQLite's SQL.
    private static func apply(_ write: FinalStepWrite, _ db: Database, authOTTHash: String, mpinID: String,
                              now: Date) throws -> FinalStepPlan.Applied {
        switch write {
        case .deleteAuth:
            try db.cachedStatement(sql: "DELETE FROM auth WHERE auth_ott_hash = ?").execute(arguments: [authOTTHash])
        case .markBrowserReady:
            try db.execute(sql: "UPDATE auth SET browser_ready = 1 WHERE auth_ott_hash = ? AND browser_ready = 0",
                           arguments: [authOTTHash])
            return db.changesCount > 0 ? .done : .refused
        case .openSession(let session, let userID):
            try openSession(db, session, userID: userID)
        case .recordLogout(let userID, let token):
            try db.execute(sql: "UPDATE auth SET logout_user = ?, logout_token = ? WHERE auth_ott_hash = ?",
                           arguments: [userID, token, authOTTHash])
        case .count(let update):
            try writeCounter(db, update, mpinID: mpinID)
        case .claimAccessNumber(let authOTT, let wid):
            try db.execute(sql: "UPDATE access_numbers SET auth_ott = ? WHERE wid = ? AND auth_ott IS NULL",
                           arguments: [authOTT, wid])
            return db.changesCount > 0 ? .done : .refused
        case .recordStatus(let status):
            try db.execute(sql: "UPDATE auth SET status = ? WHERE auth_ott_hash = ?", arguments: [status, authOTTHash])
        case .authorize(let accessCodeHash, let userID, let code):
            return try authorize(db, accessCodeHash: accessCodeHash, userID: userID, code: code, now: now)
                .map { .granted($0) } ?? .refused
        }
        return .done
    }

    /// The identity's user, wrong-PIN counter and user state (nil: no such identity).
    private static func identityCounter(_ db: Database, mpinID: String) throws -> IdentityCounter? {
        try Row.fetchOne(db.cachedStatement(sql: """
            SELECT i.user_id, i.attempts, i.blocked_at, u.state FROM identities i LEFT JOIN users u ON u.user_id = i.user_id
            WHERE i.mpin_id = ?
            """), arguments: [mpinID]).map {
            IdentityCounter(userID: $0["user_id"], attempts: $0["attempts"], blockedAt: $0["blocked_at"], userState: $0["state"])
        }
    }

    /// Writes an identity's wrong-PIN counter as `WrongPINCounter` decided.
    private static func writeCounter(_ db: Database, _ update: WrongPINCounter.Update, mpinID: String) throws {
        try db.execute(sql: "UPDATE identities SET attempts = ?, blocked_at = ? WHERE mpin_id = ?",
                       arguments: [update.attempts, update.blockedAt, mpinID])
    }

    /// Opens the RPA's session of a successful login.
    private static func openSession(_ db: Database, _ session: NewSession, userID: String) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO sessions (token_hash, user_id, expires) VALUES (?, ?, ?)")
            .execute(arguments: [session.tokenHash, userID, session.expires.timeIntervalSince1970])
    }

    /// Whether the browser has completed the access-number login of this authOTT.
    package func browserReady(authOTTHash: String) async throws -> Bool {
        try await read { db in
            try Bool.fetchOne(db, sql: """
                SELECT browser_ready FROM auth WHERE auth_ott_hash = ? AND logout_token IS NOT NULL
                """,
                              arguments: [authOTTHash]) ?? false
        }
    }

    /// Ends an access-number login: deletes the auth record, the access number and returns the
    /// logout data recorded for it.
    package func finishMobile(authOTTHash: String) async throws -> MobileLogout? {
        try await write { db in
            guard let row = try Row.fetchOne(db, sql: """
                DELETE FROM auth WHERE auth_ott_hash = ? RETURNING wid, logout_user, logout_token
                """, arguments: [authOTTHash]) else { return nil }
            let wid: String = row["wid"]
            try db.execute(sql: "DELETE FROM access_numbers WHERE wid = ?", arguments: [wid])
            guard let u: String = row["logout_user"], let t: String = row["logout_token"] else { return nil }
            return MobileLogout(userID: u, token: t)
        }
    }


    // MARK: Access numbers and sessions

    /// Stores a new access number; false if the number is already in use.
    package func createAccessNumber(wid: String, webOTTHash: String, expires: Date, now: Date, description: String) async throws -> Bool {
        try await write { db in
            try db.execute(sql: "DELETE FROM access_numbers WHERE expires <= ?", arguments: [now.timeIntervalSince1970])
            try db.execute(sql: "INSERT OR IGNORE INTO access_numbers (wid, web_ott_hash, expires, description) VALUES (?, ?, ?, ?)",
                           arguments: [wid, webOTTHash, expires.timeIntervalSince1970, description])
            return db.changesCount > 0
        }
    }

    package func accessNumberRequester(wid: String) async throws -> (webOTTHash: String, description: String)? {
        try await read { db in
            try Row.fetchOne(db, sql: "SELECT web_ott_hash, description FROM access_numbers WHERE wid = ? AND expires > ?",
                             arguments: [wid, Date().timeIntervalSince1970]).map { ($0["web_ott_hash"], $0["description"]) }
        }
    }

    /// The authOTT of a successful mobile login for this webOTT, if there is one yet.
    package func pollAccessNumber(webOTTHash: String, now: Date) async throws -> String? {
        try await read { db in
            try String.fetchOne(db, sql: "SELECT auth_ott FROM access_numbers WHERE web_ott_hash = ? AND expires > ?",
                                arguments: [webOTTHash, now.timeIntervalSince1970])
        }
    }

    /// Ends a session; false if there is none for this token and user.
    package func endSession(tokenHash: String, userID: String, now: Date) async throws -> Bool {
        try await write { db in
            try db.execute(sql: "DELETE FROM sessions WHERE token_hash = ? AND user_id = ? AND expires > ?",
                           arguments: [tokenHash, userID, now.timeIntervalSince1970])
            return db.changesCount > 0
        }
    }

    /// Deletes expired short-lived records.
    package func purgeExpired(now: Date) async throws {
        pendingAuth.purgeExpired(now: now)
        let t = now.timeIntervalSince1970
        try await write { db in
            for table in StorageSchema.expiringTables {
                try db.execute(sql: "DELETE FROM \(table) WHERE expires <= ?", arguments: [t])
            }
        }
    }
}
