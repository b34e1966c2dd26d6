/// Problems with the data directory or the stored keys, raised at start-up and by `init`.
package enum SetupError: Error, Sendable, Equatable, CustomStringConvertible {
    case dataDirectoryExists(String)
    case missingFile(String)
    case corruptFile(String)
    case insecurePermissions(String)
    case io(String)
    /// A config.json value outside its range (file, key).
    case invalidSetting(String, String)
    /// The database's schema is newer than this program knows (database, its version, the
    /// newest this program knows): a newer mpin-server migrated it.
    case schemaTooNew(database: String, found: Int, known: Int)
    /// The database cannot be reached or refused a query (which database, why).
    case database(String, String)
    /// Plain HTTP on an address other hosts can reach (the host), without `allowPlainHTTP`.
    case plainHTTPOnNetwork(String)
    /// `host certify`: not the 130 hex digits of a host key (what `mpinctl host-key` prints).
    case invalidHostKey
    /// `host certify --days` outside 1 to the maximum.
    case invalidHostCertificateDays(Int)

    package var description: String {
        switch self {
        case .dataDirectoryExists(let p): return "data directory already initialised: \(p)"
        case .missingFile(let p) where p.hasSuffix("/config.json"):
            // The usual first error: a command run on a data directory nobody initialised yet.
            let dir = String(p.dropLast("/config.json".count))
            return "missing file: \(p): run `mpin-server init --data \(dir)` first (mpin-server(8))"
        case .missingFile(let p): return "missing file: \(p)"
        case .corruptFile(let p): return "unreadable or corrupt file: \(p)"
        case .insecurePermissions(let p): return "file is readable by other users: \(p)"
        case .invalidSetting(let p, "database"):
            return "\(p): database must be \"sqlite\" or postgresql://USER@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require]"
        case .invalidSetting(let p, let key): return "\(p): \(key) is out of range"
        case .io(let m): return "I/O error: \(m)"
        case .schemaTooNew(let db, let found, let known):
            return "\(db): database schema version \(found) is newer than this mpin-server knows (schema version \(known));"
                + " upgrade mpin-server, or restore a backup made before the upgrade"
        case .database(let db, let why): return "\(db): \(why)"
        case .invalidHostKey:
            return "not a host key: give the 130 hex digits `mpinctl host-key` prints on the host"
        case .invalidHostCertificateDays(let days):
            return "--days \(days): a host certificate lasts 1 to \(DataDirectory.maxHostCertificateDays) days"
        case .plainHTTPOnNetwork(let host):
            return "refusing plain HTTP on \(host), which other hosts can reach: give --tls-cert and --tls-key"
                + " (or tlsCertificate and tlsKey in config.json), listen on 127.0.0.1 behind a TLS proxy,"
                + " or set \"allowPlainHTTP\": true in config.json"
        }
    }
}
