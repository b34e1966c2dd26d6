// System-call helpers for FileStorage: descriptor checks, whole-file reads and writes, the
// directory lock and the clean-up of temporaries left by crashed writers.

#if canImport(Glibc)
import Glibc
#endif
import MPinClient

/// Prefix of the temporary files a write renames into place.
let temporaryPrefix = ".tmp-"
/// The lock file serialising writers of one directory across processes.
let lockFileName = ".lock"

func currentErrno() -> Int32 { errno }

/// The reason for a failed call: full disks get their own reason because callers act on it.
func systemReason(_ operation: String, _ code: Int32) -> StorageError.Reason {
    if code == ENOSPC || code == EDQUOT { return .noSpace }
    return .systemError(operation: operation, errno: code)
}

/// True if `name` is a file name FileStorage will use: `A-Za-z0-9._-`, not starting with a dot
/// (so never `.`, `..`, a temporary or the lock), at most 200 bytes.
func isValidStorageName(_ name: String) -> Bool {
    let bytes = Array(name.utf8)
    guard !bytes.isEmpty, bytes.count <= 200, bytes[0] != UInt8(ascii: ".") else { return false }
    return bytes.allSatisfy { byte in
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }
}

/// Checks ownership and group/world bits shared by the directory and file checks.
func checkOwnerAndMode(_ info: stat, path: String, owner: UInt32) throws(StorageError) {
    guard info.st_uid == owner else {
        throw StorageError(path: path, reason: .wrongOwner(expected: owner, actual: info.st_uid))
    }
    let permissions = UInt32(info.st_mode) & 0o7777
    guard permissions & 0o077 == 0 else {
        throw StorageError(path: path, reason: .insecurePermissions(mode: permissions))
    }
}

/// Refuses anything but a regular file owned by `owner` with no group/world bits.
func checkValueFile(_ info: stat, path: String, owner: UInt32) throws(StorageError) {
    guard UInt32(info.st_mode) & UInt32(S_IFMT) == UInt32(S_IFREG) else {
        throw StorageError(path: path, reason: .notARegularFile)
    }
    try checkOwnerAndMode(info, path: path, owner: owner)
}

/// Reads `fd` to its end, refusing more than `limit` bytes.
/// Secure values are read through this too, so the scratch buffer is wiped on the way out and
/// the result is allocated once for the size `fstat` reported (no half-filled copies left
/// behind by growing it).
func readWhole(_ fd: Int32, path: String, limit: Int, expectedSize: Int = 0) throws(StorageError) -> [UInt8] {
    var result: [UInt8] = []
    result.reserveCapacity(min(max(expectedSize, 0), limit) + 1)
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    defer { chunk.withUnsafeMutableBytes { if let base = $0.baseAddress { explicit_bzero(base, $0.count) } } }
    while true {
        let count: Int
        do {
            count = try retryingOnInterrupt { chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) } }
        } catch {
            throw StorageError(path: path, reason: .systemError(operation: "read", errno: error.code))
        }
        if count == 0 { return result }
        guard result.count + count <= limit else {
            throw StorageError(path: path, reason: .valueTooLarge(limit: limit))
        }
        result.append(contentsOf: chunk[0..<count])
    }
}

/// Writes all of `bytes` to `fd`, retrying short writes and interrupted calls.
func writeWhole(_ fd: Int32, _ bytes: [UInt8], path: String) throws(StorageError) {
    do {
        try writeAll(fd, bytes)
    } catch {
        throw StorageError(path: path, reason: systemReason("write", error.code))
    }
}

/// fsync, retried on EINTR.
func syncDescriptor(_ fd: Int32, path: String) throws(StorageError) {
    do {
        _ = try retryingOnInterrupt { fsync(fd) }
    } catch {
        throw StorageError(path: path, reason: systemReason("fsync", error.code))
    }
}

/// Takes the directory's exclusive write lock, waiting at most `timeout`; returns the lock
/// file's descriptor, whose closing releases the lock.
func acquireDirectoryLock(directoryFD: Int32, directory: String, timeout: Duration) throws(StorageError) -> Int32 {
    let path = directory + "/" + lockFileName
    let fd = openat(directoryFD, lockFileName, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0o600)
    guard fd >= 0 else {
        let code = currentErrno()
        if code == ELOOP { throw StorageError(path: path, reason: .notARegularFile) }
        throw StorageError(path: path, reason: systemReason("open", code))
    }
    var info = stat()
    guard fstat(fd, &info) == 0, UInt32(info.st_mode) & UInt32(S_IFMT) == UInt32(S_IFREG) else {
        close(fd)
        throw StorageError(path: path, reason: .notARegularFile)
    }
    let deadline = MonotonicInstant.now + timeout
    while true {
        let code: Int32
        do {
            _ = try retryingOnInterrupt { flock(fd, LOCK_EX | LOCK_NB) }
            return fd
        } catch {
            code = error.code
        }
        guard code == EWOULDBLOCK else {
            close(fd)
            throw StorageError(path: path, reason: .systemError(operation: "flock", errno: code))
        }
        guard MonotonicInstant.now < deadline else {
            close(fd)
            throw StorageError(path: path, reason: .lockTimeout)
        }
        usleep(2_000)
    }
}

/// Removes temporaries of writers that died before renaming. Only called under the directory
/// lock, when no live writer can own one. Failures are ignored: they cost space, not data.
func removeStaleTemporaries(directoryFD: Int32) {
    let listFD = dup(directoryFD)
    guard listFD >= 0 else { return }
    // fdopendir takes ownership of listFD; closedir closes it.
    guard let stream = fdopendir(listFD) else {
        close(listFD)
        return
    }
    defer { closedir(stream) }
    rewinddir(stream)
    var stale: [String] = []
    while let entry = readdir(stream) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        if name.hasPrefix(temporaryPrefix) { stale.append(name) }
    }
    for name in stale { _ = unlinkat(directoryFD, name, 0) }
}
