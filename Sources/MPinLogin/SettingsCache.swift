import MPinClient
import MPinCrypto
import MPinJSON
import MPinWire
#if canImport(Glibc)
import Glibc
#endif

/// A backend's client settings kept in the store between logins for `maxAge` seconds, so a
/// login (a new process each time) does not fetch them before every authentication. The value
/// `settings-<hex SHA-256 of backend and prefix>` in the non-secure store holds
/// `{"backend": url, "rpsPrefix": p, "fetched": unix-seconds, "settings": {...}}`.
///
/// The settings are URLs and flags the backend publishes to anyone, so the cache holds no
/// secret. A login that fails with cached settings drops them (see `Login.run` for when it
/// tries again at once).
package struct SettingsCache {
    /// How long fetched settings are used: long enough to serve a burst of logins, short enough
    /// that a reconfigured backend is picked up soon even without a failure.
    package static let maxAge: Int64 = 600

    let storage: any Storage
    let backend: String
    let rpsPrefix: String
    /// The store value's name.
    package let name: String

    package init(storage: any Storage, backend: String, rpsPrefix: String) {
        self.storage = storage
        self.backend = backend
        self.rpsPrefix = rpsPrefix
        name = "settings-" + Hex.encode(SHA256.hash(Array(backend.utf8) + [0] + Array(rpsPrefix.utf8)))
    }

    /// The cached settings if they are for this backend and prefix and younger than `maxAge`.
    /// Anything unreadable counts as no cache.
    package func read(now: Int64 = Int64(time(nil))) -> JSONValue? {
        guard let bytes = try? storage.read(name), let document = try? JSONParser().parse(bytes),
              document["backend"]?.stringValue == backend, document["rpsPrefix"]?.stringValue == rpsPrefix,
              let fetched = document["fetched"]?.int64Value, let settings = document["settings"],
              fetched <= now + 60, fetched > now - Self.maxAge else {  // no `now - fetched`: it can overflow
            return nil
        }
        return settings
    }

    /// Keeps `settings`; a store that cannot be written only costs the next login a request.
    package func write(_ settings: JSONValue, now: Int64 = Int64(time(nil))) {
        let document = JSONValue.object([("backend", .string(backend)), ("rpsPrefix", .string(rpsPrefix)),
                                         ("fetched", .number(String(now))), ("settings", settings)])
        try? storage.write(name, document.serialized)
    }

    package func delete() {
        try? storage.delete(name)
    }
}
