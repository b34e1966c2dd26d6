import Foundation
import MPinVectorCheck

// mpin-vectors FILE...: recomputes every field of every M-Pin vector in Milagro's JSON files,
// prints each mismatch, ends with "N passed, M failed", exits 1 if any vector fails.

let files = Array(CommandLine.arguments.dropFirst())
if files.isEmpty || files.contains("--help") || files.contains("-h") {
    print("usage: mpin-vectors FILE...\n  Checks Milagro-format M-Pin vector files (two-pass, one-pass or DVS JSON).")
    exit(files.isEmpty ? 2 : 0)
}

var passed = 0
var failed = 0
var unreadable = false
let checker = VectorChecker()
for path in files {
    do {
        let report = try checker.check(file: path)
        for m in report.mismatches { print("\(path): \(m)") }
        passed += report.passed
        failed += report.failed
    } catch {
        FileHandle.standardError.write(Data("mpin-vectors: \(error)\n".utf8))
        unreadable = true
    }
}
print("\(passed) passed, \(failed) failed")
exit(failed == 0 && !unreadable ? 0 : 1)
