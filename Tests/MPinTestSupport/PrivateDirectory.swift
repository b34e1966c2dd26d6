#if canImport(Glibc)
import Glibc
#endif
import MPinClient

/// Makes a fresh private directory under /tmp (mode 0700, owned by this process's uid), as a
/// FileStorage whose required owner is `geteuid()` accepts.
public func makePrivateDirectory() throws(StorageError) -> String {
    var template = Array("/tmp/mpin-store-XXXXXX".utf8CString)
    guard let created = mkdtemp(&template) else {
        throw StorageError(path: "/tmp", reason: .systemError(operation: "mkdtemp", errno: errno))
    }
    return String(cString: created)
}
