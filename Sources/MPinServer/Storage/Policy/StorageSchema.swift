/// What both backends' schemas share and the code reads: one list, so that a new table is
/// named once. (The tables themselves are still created twice, by SQLite's GRDB migrations
/// and PostgreSQL's list of versions: their histories differ, issue 28.)
enum StorageSchema {
    /// The tables of short-lived records, each with an `expires` column (seconds since 1970):
    /// `purgeExpired` deletes their expired rows.
    static let expiringTables = ["registrations", "auth", "access_numbers", "sessions", "mfa_sessions", "authz_codes",
                                 "reg_codes", "dvs_tokens"]
}
