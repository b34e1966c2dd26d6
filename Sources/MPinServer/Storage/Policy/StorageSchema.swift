/// What both backends' schemas share and the code reads: one list, so that a new table is
/// named once, and the schema changes made since the backends' histories met, written once
/// (`SchemaChange`; the tables before them are still created twice; docs/MFA.md §11).
package enum StorageSchema {
    /// The tables of short-lived records, each with an `expires` column (seconds since 1970):
    /// `purgeExpired` deletes their expired rows.
    static let expiringTables = ["registrations", "auth", "access_numbers", "sessions", "mfa_sessions", "authz_codes",
                                 "reg_codes", "dvs_tokens"]

    /// The migrations after SQLite's `v8` and PostgreSQL's version 4, in order: SQLite
    /// registers each under its identifier, PostgreSQL makes each its next version. Append
    /// only; a shipped entry never changes.
    package static let sharedMigrations: [SharedMigration] = [
        // docs/MFA.md §8: the count of wrong registration codes tried for a user, on each of the
        // user's live codes (`WrongRegCodeCounter`), instead of in one process's memory.
        SharedMigration(sqliteIdentifier: "v9: wrong registration codes counted in the database", changes: [
            .addColumn(table: "reg_codes", SchemaColumn("failures", .integer, default: .integer(0))),
        ]),
        // docs/SECURITY.md §5: the signatures seen valid, so that a relying party's check of one
        // (replayed or altered) is answered without counting toward blocking the key (DVSSigning).
        SharedMigration(sqliteIdentifier: "v10: signatures seen valid", changes: [
            .createTable("seen_signatures", columns: [
                SchemaColumn("sig_key", .text), SchemaColumn("mpin_id", .text), SchemaColumn("user_id", .text),
                SchemaColumn("digest", .text), SchemaColumn("created", .real),
            ]),
            .createIndex("seen_signatures_user", table: "seen_signatures", columns: ["user_id"]),
        ]),
        // docs/SECURITY.md §5: registrations are bounded per client address too, the oldest beyond
        // the bound deleted on every store (`RegistrationPolicy.maxPendingPerSource`).
        SharedMigration(sqliteIdentifier: "v11: registrations by source", changes: [
            .createIndex("registrations_source", table: "registrations", columns: ["source", "created"]),
        ]),
        // The offline logins hosts report with a user's next online login (`OfflineLoginLog`,
        // docs/PROTOCOL.md §4.5.2). Kept after a revocation (the record of what happened);
        // deleted with the user.
        SharedMigration(sqliteIdentifier: "v12: offline logins reported by hosts", changes: [
            .createTable("offline_logins", columns: [
                SchemaColumn("entry_key", .text), SchemaColumn("user_id", .text), SchemaColumn("mpin_id", .text),
                SchemaColumn("host", .text), SchemaColumn("source", .text), SchemaColumn("service", .text),
                SchemaColumn("outcome", .text), SchemaColumn("login_time", .integer), SchemaColumn("reported", .real),
            ]),
            .createIndex("offline_logins_user", table: "offline_logins", columns: ["user_id", "login_time"]),
        ]),
    ]
}
