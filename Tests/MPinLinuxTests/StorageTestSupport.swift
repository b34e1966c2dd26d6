import Foundation
import MPinClient
import MPinLinux
import MPinTestSupport
import XCTest

/// Runs `body` and returns the StorageError it throws, failing the test otherwise.
func storageError<T>(_ body: () throws -> T, file: StaticString = #filePath, line: UInt = #line) -> StorageError? {
    do {
        _ = try body()
        XCTFail("expected a StorageError", file: file, line: line)
        return nil
    } catch let error as StorageError {
        return error
    } catch {
        XCTFail("expected a StorageError, got \(error)", file: file, line: line)
        return nil
    }
}

/// Names in `directory`, sorted.
func directoryEntries(_ directory: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
}

/// Permission bits of `path` (without following a final symbolic link).
func permissions(_ path: String) -> UInt32 {
    var info = stat()
    guard lstat(path, &info) == 0 else { return 0xFFFF }
    return UInt32(info.st_mode) & 0o7777
}

/// The mpin-storage-stress executable built next to the test bundle.
func stressExecutable() throws -> String { try helperExecutable("mpin-storage-stress") }

/// A helper executable of this package, built next to the test bundle.
func helperExecutable(_ name: String) throws -> String {
    var candidates: [String] = []
    if let resolved = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
        candidates.append((resolved as NSString).deletingLastPathComponent)
    }
    candidates.append(Bundle.main.bundlePath)
    candidates.append((Bundle.main.bundlePath as NSString).deletingLastPathComponent)
    for directory in candidates {
        let path = directory + "/" + name
        if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    XCTFail("\(name) not found next to the tests (looked in \(candidates)); run swift build first")
    throw POSIXError(.ENOENT)
}

/// Starts mpin-storage-stress.
func startStressWriter(_ executable: String, directory: String, name: String, writer: Int, count: Int,
                       size: Int) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = [directory, name, String(writer), String(count), String(size)]
    try process.run()
    return process
}
