import Foundation
import XCTest

/// Where the tests find the reference data kept outside the repository: Milagro's vector
/// files, the recorded traffic of the original SDK and servers (`vectors/...`,
/// `fixtures/...`).
///
/// The directory is `$MPIN_SHARED` when that is set (`make test SHARED=DIR` sets it), else
/// `../shared` beside the package. Without it (the repository cloned on its own) a test that
/// needs a reference file is skipped, saying why; with it, a file missing inside it is a
/// failure, so a broken or partial copy of the data cannot pass unnoticed.
///
///     let path = try ReferenceData.path("vectors/mpin_BN254_CX.json")
package enum ReferenceData {
    /// The environment variable naming the directory (the Makefile sets it from SHARED).
    package static let environmentVariable = "MPIN_SHARED"

    /// The reference data directory, whether or not it exists.
    package static let directory: String = {
        if let named = ProcessInfo.processInfo.environment[environmentVariable], !named.isEmpty {
            return URL(fileURLWithPath: named).standardizedFileURL.path
        }
        return packageRoot.deletingLastPathComponent().appendingPathComponent("shared").standardizedFileURL.path
    }()

    /// Whether the directory is there at all.
    package static var isPresent: Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    /// The absolute path of `relative` inside the directory. Throws XCTSkip when the directory
    /// is absent; records a failure and throws when the directory is there but the file is not.
    package static func path(_ relative: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        guard isPresent else {
            _ = announceAbsence
            throw XCTSkip("needs the reference data, not found at \(directory) (set \(environmentVariable), or make test SHARED=DIR)",
                          file: file, line: line)
        }
        let path = directory + "/" + relative
        guard FileManager.default.isReadableFile(atPath: path) else {
            XCTFail("reference file missing: \(path) (the reference data directory \(directory) is there, the file is not)",
                    file: file, line: line)
            throw Missing(path: path)
        }
        return path
    }

    /// The contents of `relative` as UTF-8 text; skips or fails as `path` does.
    package static func text(_ relative: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        try String(contentsOfFile: try path(relative, file: file, line: line), encoding: .utf8)
    }

    /// The contents of `relative` as bytes; skips or fails as `path` does.
    package static func data(_ relative: String, file: StaticString = #filePath, line: UInt = #line) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: try path(relative, file: file, line: line)))
    }

    /// A file absent from a present reference directory.
    package struct Missing: Error, CustomStringConvertible {
        package let path: String
        package var description: String { "missing reference file \(path)" }
    }

    /// The package root: the nearest ancestor of this source file holding Package.swift.
    package static let packageRoot: URL = {
        var dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while dir.path != "/" {
            if FileManager.default.fileExists(atPath: dir.appendingPathComponent("Package.swift").path) { return dir }
            dir.deleteLastPathComponent()
        }
        // This file is Tests/MPinReferenceData/ReferenceData.swift.
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }()

    /// One explanation per test run; each skipped test then names the directory briefly.
    private static let announceAbsence: Void = {
        FileHandle.standardError.write(Data("""
            note: reference data not found at \(directory): the tests that need Milagro's vectors or the \
            recorded traffic are skipped. Put the data at ../shared beside the package, or point \
            \(environmentVariable) (make test SHARED=DIR) at it.\n
            """.utf8))
    }()
}
