import Foundation
import MPinClient
import MPinLinux
import MPinTestSupport
import XCTest

final class FileStorageTests: XCTestCase {
    private var directory = ""
    private var store: FileStorage!

    override func setUpWithError() throws {
        directory = try makePrivateDirectory()
        store = FileStorage(directory: directory, options: .init(requiredOwner: geteuid()))
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
        super.tearDown()
    }

    func testRoundTripOverwriteAndDelete() throws {
        XCTAssertNil(try store.read("users"))
        try store.writeText("users", "{\"a\": 1}")
        XCTAssertEqual(try store.readText("users"), "{\"a\": 1}")
        try store.write("users", [0, 1, 2, 255])
        XCTAssertEqual(try store.read("users"), [0, 1, 2, 255])
        try store.write("users", [])
        XCTAssertEqual(try store.read("users"), [])
        XCTAssertEqual(permissions(directory + "/users"), 0o600)
        XCTAssertEqual(store.path(of: "users"), directory + "/users")
        try store.delete("users")
        XCTAssertNil(try store.read("users"))
        try store.delete("users")  // deleting nothing succeeds
        XCTAssertEqual(directoryEntries(directory), [".lock"], "no temporaries left behind")
    }

    func testFilesAre0600EvenUnderAPermissiveUmask() throws {
        let old = umask(0)
        defer { umask(old) }
        try store.writeText("tokens", "secret")
        XCTAssertEqual(permissions(directory + "/tokens"), 0o600)
        XCTAssertEqual(permissions(directory + "/.lock"), 0o600)
    }

    func testReadingNeverWrites() throws {
        XCTAssertNil(try store.read("absent"))
        XCTAssertEqual(directoryEntries(directory), [], "a read created something")
        try store.writeText("present", "x")
        var before = stat(), after = stat()
        stat(directory, &before)
        _ = try store.read("present")
        stat(directory, &after)
        XCTAssertEqual(before.st_mtim.tv_sec, after.st_mtim.tv_sec)
        XCTAssertEqual(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec)
    }

    func testGroupOrWorldAccessibleDirectoryIsRefused() throws {
        try assertRefusedWhileAccessible(directory, modes: [0o755, 0o750, 0o701, 0o707], privateMode: 0o700)
    }

    func testGroupOrWorldReadableFileIsRefused() throws {
        try assertRefusedWhileAccessible(directory + "/tokens", modes: [0o644, 0o640, 0o604, 0o660], privateMode: 0o600)
    }

    /// With `path` (the store directory or its token file) in each of `modes`, reads and writes
    /// are refused with an error naming the path and not the content; back at `privateMode`,
    /// the content is what it was.
    private func assertRefusedWhileAccessible(_ path: String, modes: [mode_t], privateMode: mode_t,
                                              file: StaticString = #filePath, line: UInt = #line) throws {
        try store.writeText("tokens", "secret-token-value")
        for mode in modes {
            chmod(path, mode)
            let readError = storageError { try store.read("tokens") }
            XCTAssertEqual(readError, StorageError(path: path, reason: .insecurePermissions(mode: UInt32(mode))), file: file, line: line)
            XCTAssertTrue(readError?.description.contains(path) == true, file: file, line: line)
            XCTAssertFalse(readError?.description.contains("secret-token-value") == true, file: file, line: line)
            let writeError = storageError { try store.writeText("tokens", "replacement") }
            XCTAssertEqual(writeError?.path, path, file: file, line: line)
        }
        chmod(path, privateMode)
        XCTAssertEqual(try store.readText("tokens"), "secret-token-value", "refused writes changed nothing", file: file, line: line)
    }

    func testWrongOwnersAreRefused() throws {
        let me = geteuid()
        let stranger = FileStorage(directory: directory, options: .init(requiredOwner: me &+ 4242))
        XCTAssertEqual(storageError { try stranger.read("x") },
                       StorageError(path: directory, reason: .wrongOwner(expected: me &+ 4242, actual: me)))
        XCTAssertNotNil(storageError { try stranger.writeText("x", "y") })

        try store.writeText("tokens", "t")
        let path = directory + "/tokens"
        guard me == 0 else { throw XCTSkip("changing a file's owner needs root") }
        XCTAssertEqual(chown(path, 1234, 1234), 0)
        XCTAssertEqual(storageError { try store.read("tokens") },
                       StorageError(path: path, reason: .wrongOwner(expected: 0, actual: 1234)))
        XCTAssertNotNil(storageError { try store.writeText("tokens", "u") })
    }

    func testLinksAndOddFilesAreRefused() throws {
        let outside = try makePrivateDirectory()
        defer { try? FileManager.default.removeItem(atPath: outside) }
        let target = outside + "/target"
        XCTAssertTrue(FileManager.default.createFile(atPath: target, contents: Data("elsewhere".utf8),
                                                     attributes: [.posixPermissions: 0o600]))
        symlink(target, directory + "/linked")
        XCTAssertEqual(storageError { try store.read("linked") },
                       StorageError(path: directory + "/linked", reason: .notARegularFile))
        XCTAssertNotNil(storageError { try store.writeText("linked", "x") })
        XCTAssertEqual(try String(contentsOfFile: target, encoding: .utf8), "elsewhere", "the link's target is untouched")

        mkfifo(directory + "/fifo", 0o600)
        XCTAssertEqual(storageError { try store.read("fifo") }?.reason, .notARegularFile)
        mkdir(directory + "/sub", 0o700)
        XCTAssertEqual(storageError { try store.read("sub") }?.reason, .notARegularFile)

        let linkedDirectory = outside + "/store-link"
        symlink(directory, linkedDirectory)
        let viaLink = FileStorage(directory: linkedDirectory, options: .init(requiredOwner: geteuid()))
        XCTAssertEqual(storageError { try viaLink.read("x") }, StorageError(path: linkedDirectory, reason: .notADirectory))

        let missing = FileStorage(directory: directory + "/nope", options: .init(requiredOwner: geteuid()))
        XCTAssertEqual(storageError { try missing.read("x") }?.reason, .directoryMissing)
        XCTAssertEqual(storageError { try missing.writeText("x", "y") }?.reason, .directoryMissing)
    }

    func testInvalidNamesAreRefused() throws {
        for name in ["", ".", "..", "../etc", "a/b", "/abs", ".lock", ".tmp-x", ".hidden", "a\0b", "a b", "é",
                     String(repeating: "a", count: 201)] {
            XCTAssertEqual(storageError { try store.read(name) }?.reason, .invalidName, name)
            XCTAssertEqual(storageError { try store.writeText(name, "x") }?.reason, .invalidName, name)
            XCTAssertEqual(storageError { try store.delete(name) }?.reason, .invalidName, name)
        }
        XCTAssertEqual(directoryEntries(directory), [])
        try store.writeText("ok_name-1.json", "fine")
        XCTAssertEqual(try store.readText("ok_name-1.json"), "fine")
    }

    func testValueSizeLimit() throws {
        let small = FileStorage(directory: directory, options: .init(requiredOwner: geteuid(), maxValueBytes: 10))
        try small.write("v", Array(repeating: 1, count: 10))
        XCTAssertEqual(storageError { try small.write("v", Array(repeating: 2, count: 11)) }?.reason, .valueTooLarge(limit: 10))
        XCTAssertEqual(try small.read("v"), Array(repeating: 1, count: 10))
        try store.write("big", Array(repeating: 3, count: 11))
        XCTAssertEqual(storageError { try small.read("big") }?.reason, .valueTooLarge(limit: 10))
    }

    func testStaleTemporariesAreRemovedByTheNextWrite() throws {
        let stale = directory + "/.tmp-tokens-deadbeef"
        XCTAssertTrue(FileManager.default.createFile(atPath: stale, contents: Data([1, 2, 3]), attributes: [.posixPermissions: 0o600]))
        XCTAssertNil(try store.read("tokens"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: stale), "reads leave it alone")
        try store.writeText("tokens", "new")
        XCTAssertEqual(directoryEntries(directory), [".lock", "tokens"])
    }

    func testAHeldLockMakesWritersWaitThenGiveUpButNotReaders() throws {
        try store.writeText("tokens", "old")
        let fd = open(directory + "/.lock", O_RDWR)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        XCTAssertEqual(flock(fd, LOCK_EX), 0)
        let impatient = FileStorage(directory: directory,
                                    options: .init(requiredOwner: geteuid(), lockTimeout: .milliseconds(300)))
        let started = Date()
        XCTAssertEqual(storageError { try impatient.writeText("tokens", "new") },
                       StorageError(path: directory + "/.lock", reason: .lockTimeout))
        let waited = Date().timeIntervalSince(started)
        XCTAssertGreaterThanOrEqual(waited, 0.29)
        XCTAssertLessThan(waited, 2)
        XCTAssertEqual(try impatient.readText("tokens"), "old")
        flock(fd, LOCK_UN)
        try impatient.writeText("tokens", "new")
        XCTAssertEqual(try impatient.readText("tokens"), "new")
    }

    func testCreateDirectory() throws {
        let path = directory + "/created"
        try FileStorage.createDirectory(path, owner: geteuid())
        XCTAssertEqual(permissions(path), 0o700)
        try FileStorage.createDirectory(path, owner: geteuid())  // existing and fine
        chmod(path, 0o755)
        XCTAssertEqual(storageError { try FileStorage.createDirectory(path, owner: geteuid()) },
                       StorageError(path: path, reason: .insecurePermissions(mode: 0o755)))
    }

    func testPlatformKeepsSecureAndNonSecureValuesApart() throws {
        let platform = LinuxPlatform(storageDirectory: directory, requiredOwner: geteuid())
        try platform.storage(.secure).writeText("data", "{\"token\": 1}")
        try platform.storage(.nonSecure).writeText("data", "{\"state\": 2}")
        XCTAssertEqual(try platform.secureStorage.readText("data"), "{\"token\": 1}")
        XCTAssertEqual(try platform.nonSecureStorage.readText("data"), "{\"state\": 2}")
        XCTAssertEqual(directoryEntries(directory), [".lock", "secure-data", "state-data"])
        XCTAssertTrue(platform.transport is LinuxHTTPTransport)
    }

    func testErrorDescriptionsNameThePathAndTheReason() {
        let error = StorageError(path: "/var/lib/mpin/secure-data", reason: .insecurePermissions(mode: 0o644))
        XCTAssertEqual(error.description,
                       "storage error at /var/lib/mpin/secure-data: mode 644 allows group/world access, must be 0700 (directory) or 0600 (file)")
        XCTAssertEqual(StorageError(path: "/d", reason: .wrongOwner(expected: 0, actual: 1000)).description,
                       "storage error at /d: owned by uid 1000, must be owned by uid 0")
    }
}
