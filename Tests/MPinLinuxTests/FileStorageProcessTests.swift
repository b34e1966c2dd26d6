import Foundation
import MPinClient
import MPinLinux
import MPinTestSupport
import XCTest

/// FileStorage under other processes: many concurrent writers, a writer killed mid-write, and a
/// full disk. Values are self-checking (see `stressValue`), so a torn value cannot pass.
final class FileStorageProcessTests: XCTestCase {
    private var directory = ""
    private var mounted = false

    override func setUpWithError() throws {
        directory = try makePrivateDirectory()
    }

    override func tearDown() {
        if mounted { umount2(directory, Int32(MNT_DETACH)) }
        mounted = false
        try? FileManager.default.removeItem(atPath: directory)
        super.tearDown()
    }

    private var store: FileStorage {
        FileStorage(directory: directory, options: .init(requiredOwner: geteuid(), maxValueBytes: 8 << 20))
    }

    func testConcurrentWritersNeverTearAValue() throws {
        let executable = try stressExecutable()
        let writers = 6, count = 25, size = 48 * 1024
        var processes: [Process] = []
        defer { for process in processes where process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        for writer in 0..<writers {
            processes.append(try startStressWriter(executable, directory: directory, name: "shared",
                                                   writer: writer, count: count, size: size))
        }
        // Read while they write: every value seen must be whole.
        var reads = 0, torn = 0
        while processes.contains(where: { $0.isRunning }) {
            if let value = try store.read("shared") {
                reads += 1
                if decodeStressValue(value, size: size) == nil { torn += 1 }
            }
        }
        for process in processes {
            process.waitUntilExit()
            XCTAssertEqual(process.terminationStatus, 0, "a writer failed")
        }
        XCTAssertGreaterThan(reads, 0, "no read overlapped the writers")
        XCTAssertEqual(torn, 0, "\(torn) of \(reads) concurrent reads saw a torn value")
        let final = try XCTUnwrap(try store.read("shared"))
        let decoded = try XCTUnwrap(decodeStressValue(final, size: size), "final value is torn")
        XCTAssertEqual(decoded.iteration, count - 1, "the last write to finish is some writer's last value")
        XCTAssertEqual(directoryEntries(directory), [".lock", "shared"])
    }

    func testWriterKilledMidWriteLeavesAWholeValue() throws {
        let executable = try stressExecutable()
        let size = 2 << 20
        try store.write("shared", stressValue(writer: 99, iteration: 0, size: size))
        var replaced = 0, interrupted = 0
        for round in 0..<6 {
            let process = try startStressWriter(executable, directory: directory, name: "shared",
                                                writer: round, count: 0, size: size)
            usleep(UInt32.random(in: 20_000...120_000))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            XCTAssertEqual(process.terminationReason, .uncaughtSignal)
            let value = try XCTUnwrap(try store.read("shared"))
            let decoded = try XCTUnwrap(decodeStressValue(value, size: size), "round \(round): torn value after SIGKILL")
            if decoded.writer == round { replaced += 1 }
            // A temporary left behind: the kill landed in the middle of a write.
            if directoryEntries(directory).contains(where: { $0 != ".lock" && $0 != "shared" }) { interrupted += 1 }
        }
        // The kills must have hit writers at work, or the test showed nothing.
        XCTAssertGreaterThan(replaced + interrupted, 0, "no killed writer had started writing")
        // The next write clears whatever temporaries the killed writers left.
        try store.write("shared", stressValue(writer: 100, iteration: 0, size: size))
        XCTAssertEqual(decodeStressValue(try XCTUnwrap(try store.read("shared")), size: size)?.writer, 100)
        XCTAssertEqual(directoryEntries(directory), [".lock", "shared"])
        print("killed writers: \(replaced) of 6 had replaced the value, \(interrupted) were killed mid-write")
    }

    func testFullDiskKeepsTheOldValue() throws {
        guard geteuid() == 0 else { throw XCTSkip("mounting a tmpfs needs root") }
        guard mount("tmpfs", directory, "tmpfs", 0, "size=64k,mode=0700") == 0 else {
            throw XCTSkip("mount -t tmpfs not permitted here (errno \(errno)); the full-disk test needs it")
        }
        mounted = true
        let old = stressValue(writer: 1, iteration: 1, size: 30 * 1024)
        try store.write("tokens", old)

        // The new value fits the disk alone, but not beside the old one: the temporary cannot be completed.
        let error = storageError { try store.write("tokens", stressValue(writer: 2, iteration: 2, size: 40 * 1024)) }
        XCTAssertEqual(error?.reason, .noSpace)
        XCTAssertEqual(error?.path.hasPrefix(directory + "/.tmp-tokens-"), true, String(describing: error))
        XCTAssertEqual(try store.read("tokens"), old)
        XCTAssertEqual(directoryEntries(directory), [".lock", "tokens"], "the failed temporary was removed")

        let huge = storageError { try store.write("other", stressValue(writer: 3, iteration: 3, size: 256 * 1024)) }
        XCTAssertEqual(huge?.reason, .noSpace)
        XCTAssertNil(try store.read("other"))
        XCTAssertEqual(try store.read("tokens"), old)

        // Space freed, writes work again.
        try store.write("tokens", Array("small".utf8))
        XCTAssertEqual(try store.readText("tokens"), "small")
    }
}
