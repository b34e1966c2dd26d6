/// The lock that tells `restore` a server is serving a data directory: `serve` holds flock(2)
/// shared on the directory itself for its lifetime (several nodes on one directory share
/// it), `restore` takes it exclusive for its own, without waiting. The kernel drops a lock with
/// its process, so a killed server leaves none behind, and no file is added to the directory.
package final class DataDirectoryLock: Sendable {
    private let handle: DirectoryHandleBox

    private init(_ handle: DirectoryHandle) { self.handle = DirectoryHandleBox(handle) }

    /// Taken by `serve` before it loads anything: fails, saying why, while a restore runs on the
    /// directory. Nil when the directory cannot be opened (the server's own start-up checks
    /// then say what is wrong with it).
    package static func serving(_ path: String) throws -> DataDirectoryLock? {
        guard let directory = try? DirectoryHandle(path: path) else { return nil }
        guard try directory.tryLock(exclusive: false) else {
            throw BackupError("\(path): a restore is running on this data directory; start the server when it is done")
        }
        return DataDirectoryLock(directory)
    }

    /// Taken by `restore`: fails while a server serves the directory.
    static func restoring(_ directory: DirectoryHandle) throws {
        guard try directory.tryLock(exclusive: true) else {
            throw BackupError("\(directory.path): a server is serving this data directory: stop it first"
                              + " (systemctl stop mpin-server, or SIGTERM to every `mpin-server serve --data \(directory.path)`)")
        }
    }
}

/// The directory's descriptor, kept open (and so locked) as long as the lock lives; only its
/// deinit touches it.
private final class DirectoryHandleBox: @unchecked Sendable {
    let handle: DirectoryHandle
    init(_ handle: DirectoryHandle) { self.handle = handle }
}
