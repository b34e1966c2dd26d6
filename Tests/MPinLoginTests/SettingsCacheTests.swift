#if canImport(Glibc)
import Glibc
#endif
import MPinClient
import MPinJSON
import MPinLogin
import MPinTestSupport
import XCTest

/// The kept client settings: anything missing, damaged, foreign or expired counts as no cache,
/// and a store that fails costs a request, never the login.
final class SettingsCacheTests: XCTestCase {
    let settings: JSONValue = .object([("mpinAuthServerURL", .string("http://mpin.test/rps"))])
    let now: Int64 = 1_750_000_000

    func testRoundTripAndExpiry() {
        let storage = MemoryStorage()
        let cache = SettingsCache(storage: storage, backend: "http://mpin.test", rpsPrefix: "rps")
        XCTAssertNil(cache.read(now: now), "missing")
        cache.write(settings, now: now)
        XCTAssertEqual(cache.read(now: now), settings)
        XCTAssertEqual(cache.read(now: now + SettingsCache.maxAge - 1), settings, "still young")
        XCTAssertNil(cache.read(now: now + SettingsCache.maxAge), "expired")
        XCTAssertNil(cache.read(now: now - 61), "fetched in the future (clock set back by more than a minute)")
        XCTAssertEqual(cache.read(now: now - 59), settings, "a little clock skew is tolerated")
        XCTAssertNil(cache.read(now: Int64.min + 1), "no overflow on absurd clocks")
        cache.delete()
        XCTAssertNil(cache.read(now: now))
        XCTAssertEqual(storage.names, [])
    }

    func testDamagedOrForeignValuesAreNoCache() throws {
        let storage = MemoryStorage()
        let cache = SettingsCache(storage: storage, backend: "http://mpin.test", rpsPrefix: "rps")
        func document(backend: String = "http://mpin.test", prefix: String = "rps", fetched: JSONValue? = nil,
                      settings: JSONValue? = nil) -> String {
            JSONValue.object([("backend", .string(backend)), ("rpsPrefix", .string(prefix)),
                              ("fetched", fetched ?? .number(String(now))), ("settings", settings ?? self.settings)])
                .serializedString
        }
        XCTAssertNotNil({ try? storage.writeText(cache.name, document()); return cache.read(now: now) }(), "the control case")
        let damaged = ["", "not json", "{", "[]", "null", "{\"settings\": {}}", "\u{0}\u{1}",
                       document(backend: "http://elsewhere.test"), document(prefix: "other"),
                       document(fetched: .string("1750000000")), document(fetched: .number("1.5e400"))]
        for text in damaged {
            try storage.writeText(cache.name, text)
            XCTAssertNil(cache.read(now: now), "\(text.prefix(60))")
        }
        // Other backends and prefixes have values of their own.
        XCTAssertNotEqual(cache.name, SettingsCache(storage: storage, backend: "http://mpin.test", rpsPrefix: "rps2").name)
        XCTAssertNotEqual(cache.name, SettingsCache(storage: storage, backend: "http://mpin.test:80", rpsPrefix: "rps").name)
    }

    func testFailingStoreIsNoCacheAndNoError() {
        let storage = MemoryStorage()
        let cache = SettingsCache(storage: storage, backend: "http://mpin.test", rpsPrefix: "rps")
        cache.write(settings, now: now)
        storage.failEveryOperation(with: .systemError(operation: "read", errno: EIO))
        XCTAssertNil(cache.read(now: now))
        cache.write(settings, now: now)
        cache.delete()
        storage.failEveryOperation(with: nil)
        XCTAssertEqual(cache.read(now: now), settings, "the failed write and delete changed nothing")
    }

    /// Through Login, on real files: a damaged settings file and an expired one are both
    /// replaced by fresh settings, and the login succeeds.
    func testLoginReplacesDamagedAndExpiredFiles() throws {
        let (h, directory) = try LoginHarness.overFiles()
        defer { LoginHarness.removeFiles(directory) }
        let path = directory + "/" + h.cache.name
        XCTAssertNotNil(h.cache.read())

        try writeRaw(path, "{\"backend\": \"http://mpin.test\", \"sett")
        let damaged = h.login(pin: "1234")
        XCTAssertEqual(damaged.outcome, .success)
        XCTAssertEqual(damaged.routes.first, .clientSettings)
        XCTAssertNotNil(h.cache.read(), "rewritten")

        h.cache.write(try XCTUnwrap(h.cache.read()), now: Int64(time(nil)) - SettingsCache.maxAge - 5)
        XCTAssertNil(h.cache.read())
        let expired = h.login(pin: "1234")
        XCTAssertEqual(expired.outcome, .success)
        XCTAssertEqual(expired.routes.first, .clientSettings)
        XCTAssertEqual(expired.events.first { if case .settingsCache = $0 { true } else { false } }, .settingsCache(hit: false))
        XCTAssertNotNil(h.cache.read(), "fresh again")

        XCTAssertEqual(unlink(path), 0)
        let missing = h.login(pin: "1234")
        XCTAssertEqual(missing.outcome, .success)
        XCTAssertEqual(missing.routes.first, .clientSettings)
    }
}

/// Replaces a file's bytes behind the store's back (mode 0600, as the store keeps it).
func writeRaw(_ path: String, _ text: String) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    guard fd >= 0 else { throw StorageError(path: path, reason: .systemError(operation: "open", errno: errno)) }
    defer { close(fd) }
    let bytes = Array(text.utf8)
    guard bytes.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == bytes.count else {
        throw StorageError(path: path, reason: .systemError(operation: "write", errno: errno))
    }
}
