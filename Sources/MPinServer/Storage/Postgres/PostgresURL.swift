import Foundation

/// The `database` setting for PostgreSQL: `postgresql://USER@HOST[:PORT]/DATABASE`, optionally
/// `?sslmode=disable|prefer|require` (also `postgres://`). It names no password: config.json
/// holds no secret, and a password, when the server needs one, is in `DIR/database.password`.
package struct PostgresURL: Sendable, Equatable, CustomStringConvertible {
    /// `disable`: plain TCP. `prefer` (the default, as libpq's): TLS when the server offers it.
    /// `require`: TLS with the server's certificate verified against the system's CAs and the host name.
    package enum SSLMode: String, Sendable { case disable, prefer, require }

    package var user: String
    package var host: String
    package var port: Int
    package var database: String
    package var sslMode: SSLMode

    package init?(_ text: String) {
        guard text.hasPrefix("postgresql://") || text.hasPrefix("postgres://"),
              let c = URLComponents(string: text), c.password == nil, c.fragment == nil,
              let user = c.user, !user.isEmpty, var host = c.host, !host.isEmpty else { return nil }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let port = c.port ?? 5432
        guard (1...65_535).contains(port) else { return nil }
        let path = c.path
        guard path.hasPrefix("/"), path.count > 1, !path.dropFirst().contains("/") else { return nil }
        var mode = SSLMode.prefer
        for item in c.queryItems ?? [] {
            guard item.name == "sslmode", let v = item.value.flatMap(SSLMode.init(rawValue:)) else { return nil }
            mode = v
        }
        self.user = user; self.host = host; self.port = port; self.database = String(path.dropFirst()); self.sslMode = mode
    }

    /// The URL as messages show it (it holds no secret).
    package var description: String {
        let h = host.contains(":") ? "[\(host)]" : host
        return "postgresql://\(user)@\(h):\(port)/\(database)" + (sslMode == .prefer ? "" : "?sslmode=\(sslMode.rawValue)")
    }
}
