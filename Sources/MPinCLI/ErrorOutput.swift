import Foundation

/// Writes `program: text` and a newline to stderr, the way both commands report a failure.
public func printError(_ text: String, program: String) {
    FileHandle.standardError.write(Data("\(program): \(text)\n".utf8))
}
