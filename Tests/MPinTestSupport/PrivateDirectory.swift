import Foundation
#if canImport(Glibc)
import Glibc
#endif
import MPinClient

/// Makes a fresh private directory under /tmp (mode 0700, owned by this process's uid), as a
/// FileStorage whose required owner is `geteuid()` accepts.
package func makePrivateDirectory() throws(StorageError) -> String {
    guard let created = makeTemporaryDirectory("mpin-store") else {
        throw StorageError(path: "/tmp", reason: .systemError(operation: "mkdtemp", errno: errno))
    }
    return created
}

/// A fresh directory under /tmp, mode 0700, owned by this process; removed by `remove()`. Tests
/// and the commands they run keep their files here, whatever the checkout's place.
package struct PrivateDirectory: Sendable {
    package let path: String

    /// Creates `/tmp/PREFIX-XXXXXX`.
    package init(_ prefix: String) throws {
        guard let created = makeTemporaryDirectory(prefix) else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        path = created
    }

    package func appending(_ name: String) -> String { path + "/" + name }

    /// Writes `text` to `name` with `mode`; returns its path.
    @discardableResult
    package func write(_ name: String, _ text: String, mode: mode_t = 0o600) throws -> String {
        let file = appending(name)
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        guard chmod(file, mode) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return file
    }

    package func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// mkdtemp of `/tmp/PREFIX-XXXXXX` (mode 0700); nil with errno set when it fails.
private func makeTemporaryDirectory(_ prefix: String) -> String? {
    var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
    guard let created = mkdtemp(&template) else { return nil }
    return String(cString: created)
}
