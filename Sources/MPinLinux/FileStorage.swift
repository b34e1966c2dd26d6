// The Linux store: one file per value under a root-owned, private directory, replaced
// atomically and durably, with writers serialised across processes.

#if canImport(Glibc)
import Glibc
#endif
import MPinClient

/// A `SecureStorage` (and so also a non-secure `Storage`) keeping each value in its own file.
///
/// The directory (default `/var/lib/mpin`) must be a real directory owned by `requiredOwner`
/// (root) with no group/world permission bits; value files must be regular files with the same
/// owner and no group/world bits (created 0600). Anything else is refused with a `StorageError`
/// naming the path and the reason, before any byte is read or written.
///
/// A write creates a temporary file in the directory (`O_EXCL`, 0600), writes and fsyncs it,
/// renames it over the value and fsyncs the directory, holding an `flock` on the directory's
/// lock file. A crash or a full disk at any point leaves the old value or the new one, whole.
/// Reads take no lock (a rename is atomic) and never create, change or remove anything.
package struct FileStorage: SecureStorage {
    /// Where values live unless configured otherwise.
    package static let defaultDirectory = "/var/lib/mpin"

    /// Checks and limits.
    package struct Options: Sendable, Equatable {
        /// The uid that must own the directory and every value file (root). Tests may set another.
        package var requiredOwner: UInt32
        /// Prepended to every value name to form the file name, so two stores can share one
        /// directory (and its lock). Must itself be valid in a name or empty.
        package var filePrefix: String
        /// The largest value written or read.
        package var maxValueBytes: Int
        /// How long a writer waits for another process's write to finish.
        package var lockTimeout: Duration

        /// Creates options: root, no prefix, 4 MiB values, 10 s lock wait.
        package init(requiredOwner: UInt32 = 0, filePrefix: String = "", maxValueBytes: Int = 4 << 20,
                    lockTimeout: Duration = .seconds(10)) {
            self.requiredOwner = requiredOwner
            self.filePrefix = filePrefix
            self.maxValueBytes = maxValueBytes
            self.lockTimeout = lockTimeout
        }
    }

    /// The directory holding the values.
    package let directory: String
    /// The checks and limits in force.
    package let options: Options

    /// Creates a store over `directory`. Nothing is touched until the first call.
    package init(directory: String = FileStorage.defaultDirectory, options: Options = Options()) {
        self.directory = directory
        self.options = options
    }

    /// Creates `path` with mode 0700 owned by `owner` if it does not exist, then checks it as
    /// every operation does (for installers and the admin CLI; the PAM module never creates it).
    package static func createDirectory(_ path: String, owner: UInt32 = 0) throws(StorageError) {
        if mkdir(path, 0o700) == 0 {
            if geteuid() != owner, chown(path, owner, UInt32.max) != 0 {
                throw StorageError(path: path, reason: .systemError(operation: "chown", errno: currentErrno()))
            }
        } else if currentErrno() != EEXIST {
            throw StorageError(path: path, reason: .systemError(operation: "mkdir", errno: currentErrno()))
        }
        let store = FileStorage(directory: path, options: Options(requiredOwner: owner))
        close(try store.openDirectory())
    }

    /// The full path of the file holding value `name` (whether or not it exists).
    package func path(of name: String) -> String { directory + "/" + options.filePrefix + name }

    package func read(_ name: String) throws(StorageError) -> [UInt8]? {
        let fileName = try validatedFileName(name)
        let path = directory + "/" + fileName
        let directoryFD = try openDirectory()
        defer { close(directoryFD) }
        // O_NONBLOCK: a FIFO planted under the name must not hang the login before fstat refuses it.
        let fd = openat(directoryFD, fileName, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        if fd < 0 {
            let code = currentErrno()
            if code == ENOENT { return nil }
            if code == ELOOP { throw StorageError(path: path, reason: .notARegularFile) }
            throw StorageError(path: path, reason: .systemError(operation: "open", errno: code))
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw StorageError(path: path, reason: .systemError(operation: "fstat", errno: currentErrno()))
        }
        try checkValueFile(info, path: path, owner: options.requiredOwner)
        guard Int(info.st_size) <= options.maxValueBytes else {
            throw StorageError(path: path, reason: .valueTooLarge(limit: options.maxValueBytes))
        }
        return try readWhole(fd, path: path, limit: options.maxValueBytes, expectedSize: Int(info.st_size))
    }

    package func write(_ name: String, _ value: [UInt8]) throws(StorageError) {
        let fileName = try validatedFileName(name)
        let path = directory + "/" + fileName
        guard value.count <= options.maxValueBytes else {
            throw StorageError(path: path, reason: .valueTooLarge(limit: options.maxValueBytes))
        }
        let directoryFD = try openDirectory()
        defer { close(directoryFD) }
        let lockFD = try acquireDirectoryLock(directoryFD: directoryFD, directory: directory,
                                              timeout: options.lockTimeout)
        defer { close(lockFD) }
        try checkExisting(fileName, directoryFD: directoryFD, path: path)
        removeStaleTemporaries(directoryFD: directoryFD)

        let temporaryName = temporaryPrefix + fileName + "-" + String(UInt64.random(in: .min ... .max), radix: 16)
        let temporaryPath = directory + "/" + temporaryName
        let fd = openat(directoryFD, temporaryName, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StorageError(path: temporaryPath, reason: systemReason("open", currentErrno()))
        }
        do throws(StorageError) {
            defer { close(fd) }
            // The umask may only have removed bits; make the mode and owner exactly what reads demand.
            guard fchmod(fd, 0o600) == 0 else {
                throw StorageError(path: temporaryPath, reason: .systemError(operation: "fchmod", errno: currentErrno()))
            }
            if geteuid() != options.requiredOwner, fchown(fd, options.requiredOwner, UInt32.max) != 0 {
                throw StorageError(path: temporaryPath, reason: .systemError(operation: "fchown", errno: currentErrno()))
            }
            try writeWhole(fd, value, path: temporaryPath)
            try syncDescriptor(fd, path: temporaryPath)
        } catch {
            _ = unlinkat(directoryFD, temporaryName, 0)
            throw error
        }
        guard renameat(directoryFD, temporaryName, directoryFD, fileName) == 0 else {
            let code = currentErrno()
            _ = unlinkat(directoryFD, temporaryName, 0)
            throw StorageError(path: path, reason: systemReason("rename", code))
        }
        // Makes the rename itself durable; without it a power cut could bring back the old value.
        try syncDescriptor(directoryFD, path: directory)
    }

    package func delete(_ name: String) throws(StorageError) {
        let fileName = try validatedFileName(name)
        let path = directory + "/" + fileName
        let directoryFD = try openDirectory()
        defer { close(directoryFD) }
        let lockFD = try acquireDirectoryLock(directoryFD: directoryFD, directory: directory,
                                              timeout: options.lockTimeout)
        defer { close(lockFD) }
        var info = stat()
        if fstatat(directoryFD, fileName, &info, AT_SYMLINK_NOFOLLOW) != 0 {
            let code = currentErrno()
            if code == ENOENT { return }
            throw StorageError(path: path, reason: .systemError(operation: "stat", errno: code))
        }
        guard UInt32(info.st_mode) & UInt32(S_IFMT) == UInt32(S_IFREG) else {
            throw StorageError(path: path, reason: .notARegularFile)
        }
        guard unlinkat(directoryFD, fileName, 0) == 0 else {
            throw StorageError(path: path, reason: .systemError(operation: "unlink", errno: currentErrno()))
        }
        try syncDescriptor(directoryFD, path: directory)
    }

    // MARK: - Checks

    private func validatedFileName(_ name: String) throws(StorageError) -> String {
        let fileName = options.filePrefix + name
        guard isValidStorageName(name), options.filePrefix.isEmpty || isValidStorageName(options.filePrefix),
              isValidStorageName(fileName) else {
            // The name is not a secret, but an invalid one may be garbage: show a bounded, sanitized form.
            let shown = String(String.UnicodeScalarView(name.unicodeScalars.prefix(64).map {
                ($0.value >= 0x20 && $0.value < 0x7f) ? $0 : "?"
            }))
            throw StorageError(path: directory + "/" + shown, reason: .invalidName)
        }
        return fileName
    }

    /// Opens the directory without following a symbolic link and checks owner and mode.
    func openDirectory() throws(StorageError) -> Int32 {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            let code = currentErrno()
            switch code {
            case ENOENT: throw StorageError(path: directory, reason: .directoryMissing)
            case ENOTDIR, ELOOP: throw StorageError(path: directory, reason: .notADirectory)
            default: throw StorageError(path: directory, reason: .systemError(operation: "open", errno: code))
            }
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = currentErrno()
            close(fd)
            throw StorageError(path: directory, reason: .systemError(operation: "fstat", errno: code))
        }
        do {
            try checkOwnerAndMode(info, path: directory, owner: options.requiredOwner)
        } catch {
            close(fd)
            throw error
        }
        return fd
    }

    /// A write refuses to replace a value file that reads would refuse.
    private func checkExisting(_ fileName: String, directoryFD: Int32, path: String) throws(StorageError) {
        var info = stat()
        if fstatat(directoryFD, fileName, &info, AT_SYMLINK_NOFOLLOW) != 0 {
            let code = currentErrno()
            if code == ENOENT { return }
            throw StorageError(path: path, reason: .systemError(operation: "stat", errno: code))
        }
        try checkValueFile(info, path: path, owner: options.requiredOwner)
    }
}
