import Foundation
import MPinCrypto
import MPinTestSupport
import MPinVectorCheck
import XCTest

/// The 300 two-pass and 300 one-pass Milagro M-Pin vectors and the 10 DVS vectors, in process
/// through VectorChecker and through the built `mpin-vectors` executable.
final class MPinVectorFileTests: XCTestCase {
    static let twoPass = "vectors/mpin_BN254_CX.json"
    static let onePass = "vectors/mpin_BN254_CXOnePass.json"
    static let dvs = "vectors/mpin_dvs_BN254CX_sample.json"

    private func checkFile(_ relative: String, count: Int = 300) throws {
        let path = try TestData.path(relative)
        let report = try VectorChecker().check(file: path)
        XCTAssertEqual(report.passed, count, "\(relative): vectors passed")
        XCTAssertEqual(report.failed, 0, "\(relative): vectors failed")
        if !report.mismatches.isEmpty {
            let first = report.mismatches.prefix(10).map { "  \($0)" }.joined(separator: "\n")
            XCTFail("\(relative): \(report.mismatches.count) mismatching fields, first ones:\n\(first)")
        }
    }

    func testTwoPassVectors() throws { try checkFile(Self.twoPass) }

    func testOnePassVectors() throws { try checkFile(Self.onePass) }

    func testDVSVectors() throws { try checkFile(Self.dvs, count: 10) }

    // MARK: The executable

    /// The built `mpin-vectors`: next to the test bundle (the products directory), else in
    /// .build/release or .build/debug of the package.
    private func executable() throws -> URL {
        var dirs = [URL]()
        if let exe = Bundle.main.executableURL { dirs.append(exe.resolvingSymlinksInPath().deletingLastPathComponent()) }
        dirs.append(Bundle(for: Self.self).bundleURL.resolvingSymlinksInPath().deletingLastPathComponent())
        if let arg0 = CommandLine.arguments.first, arg0.contains("/") {
            dirs.append(URL(fileURLWithPath: arg0).resolvingSymlinksInPath().deletingLastPathComponent())
        }
        // On macOS the bundle is a directory: products/X.xctest/Contents/MacOS/X.
        dirs += dirs.map { $0.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent() }
        for config in ["release", "debug"] {
            dirs.append(TestData.packageRoot.appendingPathComponent(".build").appendingPathComponent(config))
        }
        for dir in dirs {
            let candidate = dir.appendingPathComponent("mpin-vectors")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        XCTFail("mpin-vectors executable not found; looked in \(dirs.map(\.path))")
        throw ParseError("mpin-vectors not found")
    }

    private func run(_ exe: URL, _ arguments: [String]) throws -> ProcessResult {
        try runProcess(exe.path, arguments)
    }

    func testExecutableOnBothFiles() throws {
        let exe = try executable()
        let files = [try TestData.path(Self.twoPass), try TestData.path(Self.onePass)]
        let result = try run(exe, files)
        XCTAssertEqual(result.status, 0, "exit status; stderr: \(result.stderr)")
        XCTAssertEqual(result.lines.last, "600 passed, 0 failed", "last line; output:\n\(result.stdout.prefix(2000))")
        XCTAssertEqual(result.lines.count, 1, "no mismatch lines expected")
    }

    func testExecutableOnDVSFile() throws {
        let exe = try executable()
        let result = try run(exe, [try TestData.path(Self.dvs)])
        XCTAssertEqual(result.status, 0, "exit status; stderr: \(result.stderr)")
        XCTAssertEqual(result.lines, ["10 passed, 0 failed"], "output:\n\(result.stdout.prefix(2000))")
    }

    /// A DVS vector whose expected verdict is flipped, and one with a changed V, are reported.
    func testExecutableReportsCorruptedDVSVector() throws {
        let exe = try executable()
        let data = try Data(contentsOf: URL(fileURLWithPath: try TestData.path(Self.dvs)))
        guard var list = try JSONSerialization.jsonObject(with: data) as? [[String: Any]], list.count >= 4 else {
            return XCTFail("cannot read the DVS vectors as a JSON list")
        }
        list = Array(list.prefix(4))
        list[0]["SERVER_OUTPUT"] = -19
        guard let v = list[2]["V"] as? String, let last = v.last else { return XCTFail("vector 2 has no V") }
        list[2]["V"] = String(v.dropLast()) + (last == "0" ? "1" : "0")

        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mpin-vectors-dvs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let corrupted = dir.appendingPathComponent("dvs.json")
        try JSONSerialization.data(withJSONObject: list).write(to: corrupted)

        let result = try run(exe, [corrupted.path])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertEqual(result.lines.last, "2 passed, 2 failed", "output:\n\(result.stdout)")
        let report = try VectorChecker().check(file: corrupted.path)
        XCTAssertEqual(Set(report.mismatches.map { "\($0.vector) \($0.field)" }), ["0 SERVER_OUTPUT", "2 V"])
    }

    func testExecutableReportsCorruptedVector() throws {
        let exe = try executable()
        let source = try TestData.path(Self.twoPass)
        let data = try Data(contentsOf: URL(fileURLWithPath: source))
        guard var list = try JSONSerialization.jsonObject(with: data) as? [[String: Any]], list.count >= 3 else {
            return XCTFail("cannot read \(source) as a JSON list")
        }
        list = Array(list.prefix(3))
        guard let original = list[1]["HASH_MPIN_ID_HEX"] as? String, let last = original.last else {
            return XCTFail("vector 1 has no HASH_MPIN_ID_HEX")
        }
        let number = "\(list[1]["test_no"] ?? "?")"
        let altered = String(original.dropLast()) + (last == "0" ? "1" : "0")
        list[1]["HASH_MPIN_ID_HEX"] = altered

        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("mpin-vectors-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let corrupted = dir.appendingPathComponent("corrupted.json")
        try JSONSerialization.data(withJSONObject: list).write(to: corrupted)

        let result = try run(exe, [corrupted.path])
        XCTAssertNotEqual(result.status, 0, "exit status for a corrupted file")
        XCTAssertEqual(result.lines.last, "2 passed, 1 failed", "summary; output:\n\(result.stdout)")
        let mismatches = result.lines.dropLast()
        XCTAssertEqual(mismatches.count, 1, "exactly one mismatch line; output:\n\(result.stdout)")
        let line = mismatches.first ?? ""
        XCTAssertTrue(line.contains("vector \(number): HASH_MPIN_ID_HEX:"), "mismatch line names vector and field: \(line)")
        XCTAssertTrue(line.contains("expected \(altered)"), "mismatch line shows the file's value: \(line)")
        XCTAssertTrue(line.contains("got \(original)"), "mismatch line shows the recomputed value: \(line)")

        // The in-process checker agrees.
        let report = try VectorChecker().check(file: corrupted.path)
        XCTAssertEqual(report.passed, 2)
        XCTAssertEqual(report.failed, 1)
        XCTAssertEqual(report.mismatches.map(\.field), ["HASH_MPIN_ID_HEX"])
    }
}
