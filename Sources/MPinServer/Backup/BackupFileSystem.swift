#if canImport(Glibc)
import Glibc
#endif

// The system calls of backup and restore, kept apart from Foundation: glibc's `struct stat`
// fields are readable only where Glibc alone is imported (see MPinPOSIX's FileStatus), and
// every file here is reached through a directory descriptor (openat with O_NOFOLLOW), so
// that a symbolic link planted in a backup or a data directory is refused, never followed.

/// A failed system call: what was tried, on which path, and errno's text (never file contents).
struct FileSystemError: Error, Sendable, CustomStringConvertible {
    let description: String
    init(_ what: String, _ path: String, errno code: Int32 = errno) {
        description = "cannot \(what) \(path): \(String(cString: strerror(code)))"
    }
    init(message: String) { description = message }
}

/// What lstat (fstatat without following) says of a name.
struct EntryStatus: Sendable {
    let mode: UInt32
    let owner: UInt32
    let group: UInt32
    let size: Int64
    var isRegularFile: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFREG) }
    var isDirectory: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFDIR) }
    var isSymbolicLink: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFLNK) }
    var permissions: UInt32 { mode & 0o7777 }

    init(_ st: stat) {
        mode = UInt32(st.st_mode); owner = UInt32(st.st_uid); group = UInt32(st.st_gid); size = Int64(st.st_size)
    }

    /// The entry at `path` itself (a symbolic link is reported as one); nil when absent.
    static func of(path: String) throws(FileSystemError) -> EntryStatus? {
        var st = stat()
        if lstat(path, &st) == 0 { return EntryStatus(st) }
        if errno == ENOENT { return nil }
        throw FileSystemError("examine", path)
    }

    /// The open file or directory.
    static func of(descriptor: Int32, path: String) throws(FileSystemError) -> EntryStatus {
        var st = stat()
        guard fstat(descriptor, &st) == 0 else { throw FileSystemError("examine", path) }
        return EntryStatus(st)
    }
}

/// An open directory; its entries are created, opened, renamed and removed relative to it.
/// Closed when it goes away.
final class DirectoryHandle {
    let path: String
    let descriptor: Int32

    /// Opens an existing directory, refusing a symbolic link in its place.
    init(path: String) throws(FileSystemError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ELOOP || errno == ENOTDIR { throw FileSystemError(message: "\(path) is not a directory (a symbolic link is not followed)") }
            throw FileSystemError("open the directory", path)
        }
        self.path = path; descriptor = fd
    }

    deinit { close(descriptor) }

    func child(_ name: String) -> String { path + "/" + name }

    /// The names in the directory, without `.` and `..`, sorted.
    func names() throws(FileSystemError) -> [String] {
        let copy = dup(descriptor)
        guard copy >= 0 else { throw FileSystemError("list", path) }
        guard let stream = fdopendir(copy) else {
            let code = errno
            close(copy)
            throw FileSystemError("list", path, errno: code)
        }
        defer { closedir(stream) }
        rewinddir(stream)
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    func status(_ name: String) throws(FileSystemError) -> EntryStatus? {
        var st = stat()
        if fstatat(descriptor, name, &st, AT_SYMLINK_NOFOLLOW) == 0 { return EntryStatus(st) }
        if errno == ENOENT { return nil }
        throw FileSystemError("examine", child(name))
    }

    /// Opens a regular file of the directory for reading (not through a symbolic link).
    func openForReading(_ name: String) throws(FileSystemError) -> Int32 {
        let fd = openat(descriptor, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw FileSystemError("open", child(name)) }
        guard (try? EntryStatus.of(descriptor: fd, path: child(name)))?.isRegularFile == true else {
            close(fd)
            throw FileSystemError(message: "\(child(name)) is not a regular file")
        }
        return fd
    }

    /// Creates a new file (never an existing name, never through a link) with exactly `mode`.
    func create(_ name: String, mode: UInt32) throws(FileSystemError) -> Int32 {
        let fd = openat(descriptor, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode_t(mode))
        guard fd >= 0 else { throw FileSystemError("create", child(name)) }
        guard fchmod(fd, mode_t(mode)) == 0 else {
            close(fd); unlinkat(descriptor, name, 0)
            throw FileSystemError("set the mode of", child(name))
        }
        return fd
    }

    /// Creates a subdirectory 0700 and opens it.
    func makeDirectory(_ name: String) throws(FileSystemError) -> DirectoryHandle {
        guard mkdirat(descriptor, name, 0o700) == 0 else { throw FileSystemError("create the directory", child(name)) }
        let handle = try DirectoryHandle(path: child(name))
        guard fchmod(handle.descriptor, 0o700) == 0 else { throw FileSystemError("set the mode of", child(name)) }
        return handle
    }

    /// Renames `name` to `target` in `destination` (both on one file system: within a data directory).
    func move(_ name: String, to destination: DirectoryHandle, as target: String) throws(FileSystemError) {
        guard renameat(descriptor, name, destination.descriptor, target) == 0 else {
            throw FileSystemError("move \(child(name)) to", destination.child(target))
        }
    }

    func remove(_ name: String) { unlinkat(descriptor, name, 0) }
    func removeDirectory(_ name: String) { unlinkat(descriptor, name, AT_REMOVEDIR) }

    /// Makes what was created or renamed in the directory durable.
    func sync() { fsync(descriptor) }

    /// Gives an entry to `owner`:`group` (as root; nothing to do when they are already its).
    func changeOwner(_ name: String, owner: UInt32, group: UInt32) throws(FileSystemError) {
        guard let status = try status(name) else { return }
        if status.owner == owner && status.group == group { return }
        guard fchownat(descriptor, name, owner, group, AT_SYMLINK_NOFOLLOW) == 0 else {
            throw FileSystemError("give to uid \(owner) the file", child(name))
        }
    }

    /// The directory's own mode and owner.
    func ownStatus() throws(FileSystemError) -> EntryStatus { try EntryStatus.of(descriptor: descriptor, path: path) }

    /// Sets the directory's own mode.
    func setMode(_ mode: UInt32) throws(FileSystemError) {
        guard fchmod(descriptor, mode_t(mode)) == 0 else { throw FileSystemError("set the mode of", path) }
    }

    /// Takes flock(2) on the directory without waiting: shared (servers) or exclusive
    /// (restore). False when another process holds a conflicting lock.
    func tryLock(exclusive: Bool) throws(FileSystemError) -> Bool {
        if flock(descriptor, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) == 0 { return true }
        if errno == EAGAIN { return false }  // EWOULDBLOCK
        throw FileSystemError("lock", path)
    }
}

/// Writes all of `bytes` to `fd`, retrying short writes and EINTR.
func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws(FileSystemError) {
    var offset = 0
    while offset < bytes.count {
        let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
        if n < 0 { if errno == EINTR { continue }; throw FileSystemError("write", path) }
        offset += n
    }
}

/// Reads up to `count` bytes into `buffer`; 0 at the end of the file.
func readSome(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer, path: String) throws(FileSystemError) -> Int {
    while true {
        let n = read(fd, buffer.baseAddress, buffer.count)
        if n >= 0 { return n }
        if errno != EINTR { throw FileSystemError("read", path) }
    }
}

/// fsync, then close; a failed fsync is an error (the copy may not be on disk).
func syncAndClose(_ fd: Int32, path: String) throws(FileSystemError) {
    defer { close(fd) }
    guard fsync(fd) == 0 else { throw FileSystemError("sync", path) }
}

/// The effective user is root (restore then gives files to the data directory's owner).
var runningAsRoot: Bool { geteuid() == 0 }
