#if canImport(Glibc)
import Glibc
#endif
import MPinClient
import MPinLogin
import MPinTestSupport
import Synchronization
import XCTest

/// The Unix user -> identity map: missing is empty, damaged is an error (never silently
/// empty, never overwritten), and a login over a damaged or unreadable map fails before it
/// asks for a PIN.
final class AccountMapTests: XCTestCase {
    let alice = AccountMap.Account(identity: "alice@example.org", backend: "http://mpin.test")

    func testMissingSetReplaceRemove() throws {
        let storage = MemoryStorage()
        let map = AccountMap(storage: storage)
        XCTAssertTrue(try map.all().isEmpty)
        XCTAssertNil(try map.account(for: "alice"))
        try storage.writeText(AccountMap.document, "")
        XCTAssertTrue(try map.all().isEmpty, "an empty value is an empty map")

        try map.set(alice, for: "alice")
        try map.set(.init(identity: "bob@example.org", backend: "http://mpin.test"), for: "bob")
        XCTAssertEqual(try map.account(for: "alice"), alice)
        let moved = AccountMap.Account(identity: "alice@example.com", backend: "https://other.test")
        try map.set(moved, for: "alice")
        XCTAssertEqual(try map.account(for: "alice"), moved)
        XCTAssertEqual(try map.all().count, 2)
        try map.set(nil, for: "alice")
        XCTAssertNil(try map.account(for: "alice"))
        XCTAssertEqual(try map.all().map(\.unixUser), ["bob"])
    }

    /// pam_mpin.so reads the index beside `accounts` (pam/Module/Unregistered.swift): every write
    /// of the document rewrites it, naming the document's size and checksum and every Unix user.
    func testEveryWriteRefreshesTheIndex() throws {
        let storage = MemoryStorage()
        let map = AccountMap(storage: storage)
        func expectIndex(_ names: [String], _ message: String) throws {
            let document = try XCTUnwrap(storage.read(AccountMap.document), message)
            let index = String(decoding: try XCTUnwrap(storage.read(AccountMap.indexDocument), message), as: UTF8.self)
            func hex16(_ value: UInt64) -> String {
                let digits = String(value, radix: 16)
                return String(repeating: "0", count: 16 - digits.count) + digits
            }
            let body = names.map { $0 + "\n" }.joined()
            let header = "mpin-accounts-index 1 \(document.count) \(hex16(AccountMap.fnv1a64(document))) "
                + "\(hex16(AccountMap.fnv1a64(Array(body.utf8))))\n"
            XCTAssertEqual(index, header + body, message)
        }
        try map.set(alice, for: "alice")
        try expectIndex(["alice"], "after the first registration")
        try map.set(.init(identity: "bob@example.org", backend: "http://mpin.test"), for: "bob")
        try expectIndex(["alice", "bob"], "after a second one")
        try map.set(nil, for: "alice")
        try expectIndex(["bob"], "after a removal")
    }

    /// A write of the document whose index then cannot be written (a full disk at that moment)
    /// leaves no index at all: the one made from the previous document, which did not name the
    /// user just registered, must not be left for pam_mpin.so to believe.
    func testAFailedIndexWriteLeavesNoOldIndex() throws {
        let storage = IndexWritesFail()
        let map = AccountMap(storage: storage)
        try map.set(alice, for: "alice")
        XCTAssertNotNil(try storage.read(AccountMap.indexDocument))
        storage.failIndexWrites = true
        try map.set(.init(identity: "bob@example.org", backend: "http://mpin.test"), for: "bob")
        XCTAssertEqual(try map.account(for: "bob")?.identity, "bob@example.org")
        XCTAssertNil(try storage.read(AccountMap.indexDocument), "no index that omits bob")
    }

    /// FNV-1a 64's published values: the module computes the same function in Embedded Swift.
    func testIndexChecksumIsFNV1a64() {
        XCTAssertEqual(AccountMap.fnv1a64([]), 0xcbf2_9ce4_8422_2325)
        XCTAssertEqual(AccountMap.fnv1a64(Array("a".utf8)), 0xaf63_dc4c_8601_ec8c)
        XCTAssertEqual(AccountMap.fnv1a64(Array("foobar".utf8)), 0x8594_4171_f739_67e8)
    }

    func testDamagedMapIsAnErrorAndIsNotOverwritten() throws {
        let storage = MemoryStorage()
        let map = AccountMap(storage: storage)
        for text in ["not json", "{", "[]", "\"alice\"", "{\"alice\": "] {
            try storage.writeText(AccountMap.document, text)
            XCTAssertThrowsError(try map.account(for: "alice"), text)
            XCTAssertThrowsError(try map.set(alice, for: "alice"), "\(text): set must not replace a damaged map")
            XCTAssertEqual(storage.text(AccountMap.document), text)
        }
        // Entries without both fields are skipped; the others still work.
        try storage.writeText(AccountMap.document,
                              #"{"alice": {"identity": "alice@example.org", "backend": "http://mpin.test"}, "bob": {"identity": 7}, "eve": "x"}"#)
        XCTAssertEqual(try map.all().map(\.unixUser), ["alice"])
        XCTAssertEqual(try map.account(for: "alice"), alice)
        XCTAssertNil(try map.account(for: "bob"))
    }

    /// Login over a damaged map, an unreadable store, and a map file with unsafe permissions:
    /// a typed failure naming the problem, before the PIN prompt, with no request sent.
    func testLoginFailsBeforeThePINOnADamagedMap() throws {
        let h = try LoginHarness()
        try h.register()
        try h.plain.writeText(AccountMap.document, "{\"alice\": ")
        let damaged = h.login(pin: "1234")
        guard case .failed(let why) = damaged.outcome else { return XCTFail("\(damaged.outcome)") }
        XCTAssertTrue(why.contains("accounts"), why)
        XCTAssertFalse(damaged.pinAsked)
        XCTAssertEqual(damaged.routes, [])

        let broken = MemoryStorage()
        broken.failEveryOperation(with: .lockTimeout)
        let h2 = try LoginHarness(plain: broken)
        let unreadable = h2.login(pin: "1234")
        guard case .failed(let why2) = unreadable.outcome else { return XCTFail("\(unreadable.outcome)") }
        XCTAssertTrue(why2.contains("lock"), why2)
        XCTAssertFalse(unreadable.pinAsked)
    }

    func testLoginOverMapFiles() throws {
        let (h, directory) = try LoginHarness.overFiles()
        defer { LoginHarness.removeFiles(directory) }
        let path = directory + "/" + AccountMap.document

        XCTAssertEqual(chmod(path, 0o644), 0)
        let exposed = h.login(pin: "1234")
        guard case .failed(let why) = exposed.outcome else { return XCTFail("\(exposed.outcome)") }
        XCTAssertTrue(why.contains("mode 644"), why)
        XCTAssertFalse(exposed.pinAsked)

        try writeRaw(path, "\u{FEFF}garbage")
        XCTAssertEqual(chmod(path, 0o600), 0)
        guard case .failed = h.login(pin: "1234").outcome else { return XCTFail("a damaged file must fail the login") }

        XCTAssertEqual(unlink(path), 0)
        let missing = h.login(pin: "1234")
        XCTAssertEqual(missing.outcome, .unknownUser, "no map: nobody is known")
        XCTAssertFalse(missing.pinAsked)
    }
}

/// A store whose writes of the accounts index fail when told to (ENOSPC).
private final class IndexWritesFail: Storage {
    let values = MemoryStorage()
    private let failing = Mutex(false)
    var failIndexWrites: Bool {
        get { failing.withLock { $0 } }
        set { failing.withLock { $0 = newValue } }
    }
    func read(_ name: String) throws(StorageError) -> [UInt8]? { try values.read(name) }
    func write(_ name: String, _ value: [UInt8]) throws(StorageError) {
        if failIndexWrites && name == AccountMap.indexDocument {
            throw StorageError(path: name, reason: .systemError(operation: "write", errno: 28))
        }
        try values.write(name, value)
    }
    func delete(_ name: String) throws(StorageError) { try values.delete(name) }
}
