// Which helper pam_mpin.so runs. It runs with the caller's privileges (root in sshd and sudo),
// so it must be a file only root, or the caller itself, can have written, reached through
// directories only root can change: checked on the descriptor that is then executed, so that
// nothing can be swapped between the check and the exec (docs/SECURITY.md §6.3).
import CPAMModule

enum HelperFile {
    case opened(Int32)
    case refused
    case outOfMemory
}

private let fileTypeMask: UInt32 = 0o170000
private let regularFile: UInt32 = 0o100000
private let directory: UInt32 = 0o040000
private let symbolicLink: UInt32 = 0o120000
private let writableByGroupOrOthers: UInt32 = 0o022
private let stickyBit: UInt32 = 0o1000

/// Opens `path` for execution: an absolute path, each directory from / down owned by root and
/// writable by nobody else, none a symbolic link, and the file itself a regular file (not a
/// symbolic link) owned by root or the effective user and writable only by its owner. The
/// descriptor (O_PATH, close-on-exec) is what the module executes.
func openTrustedHelper(_ pamh: OpaquePointer, _ path: UnsafePointer<CChar>) -> HelperFile {
    guard path[0] == 47 else {  // "/"
        var line = LogLine("helper=")
        line.append(cString: path)
        line.append(": not an absolute path")
        line.send(pamh, LOG_ERR)
        return .refused
    }
    let length = strlen(path)
    guard length < Int(PATH_MAX) else {
        logError(pamh, "cannot run ", path, errno: ENAMETOOLONG)
        return .refused
    }
    // A copy whose slashes become NULs, one directory at a time. malloc, checked:
    // withUnsafeTemporaryAllocation would take this much from the heap through the runtime,
    // which does not tell the caller when memory runs out.
    guard let copy = malloc(length + 1)?.assumingMemoryBound(to: CChar.self) else { return .outOfMemory }
    defer { free(copy) }
    memcpy(copy, path, length + 1)
    return openTrusted(pamh, path, copy, length)
}

private func openTrusted(_ pamh: OpaquePointer, _ path: UnsafePointer<CChar>, _ copy: UnsafeMutablePointer<CChar>, _ length: Int) -> HelperFile {

    var parent = mpin_openat(AT_FDCWD, cString("/"), Int32(MPIN_OPEN_ROOT))
    guard parent >= 0 else {
        logError(pamh, "cannot run ", path, errno: mpin_errno())
        return .refused
    }
    guard isTrustedDirectory(parent, passedThrough: true) else {
        close(parent)
        refuse(pamh, path, upTo: 1, "must be owned by root and writable only by root")
        return .refused
    }
    var parentEnd = 1
    var start = 1
    while true {
        while copy[start] == 47 { start += 1 }
        var end = start
        while copy[end] != 0 && copy[end] != 47 { end += 1 }
        if copy[end] == 0 { break }  // copy + start is the file's name
        copy[end] = 0
        let next = mpin_openat(parent, copy + start, Int32(MPIN_OPEN_DIR))
        let failure = mpin_errno()
        close(parent)
        guard next >= 0 else {
            if failure == ENOTDIR || failure == ELOOP {
                refuse(pamh, path, upTo: end, "is a symbolic link or not a directory")
            } else {
                logError(pamh, "cannot run ", path, errno: failure)
            }
            return .refused
        }
        parent = next
        guard isTrustedDirectory(parent, passedThrough: true) else {
            close(parent)
            refuse(pamh, path, upTo: end, "must be owned by root and writable only by root")
            return .refused
        }
        parentEnd = end
        start = end + 1
    }
    // The helper's own directory: no sticky exception there (see isTrustedDirectory).
    guard isTrustedDirectory(parent, passedThrough: false) else {
        close(parent)
        refuse(pamh, path, upTo: parentEnd, "must be owned by root and writable only by root")
        return .refused
    }
    let file = start < length ? mpin_openat(parent, copy + start, Int32(MPIN_OPEN_FILE)) : -1
    let failure = start < length ? mpin_errno() : EISDIR
    close(parent)
    guard file >= 0 else {
        logError(pamh, "cannot run ", path, errno: failure)
        return .refused
    }
    var st = stat()
    guard fstat(file, &st) == 0 else {
        logError(pamh, "cannot run ", path, errno: mpin_errno())
        close(file)
        return .refused
    }
    let kind = st.st_mode & fileTypeMask
    guard kind == regularFile, st.st_mode & writableByGroupOrOthers == 0, st.st_uid == 0 || st.st_uid == geteuid() else {
        var line = LogLine("refusing to run ")
        line.append(cString: path)
        if kind == symbolicLink {
            line.append(": it is a symbolic link; it must be a regular file owned by root and writable only by its owner")
        } else {
            line.append(": it must be a regular file owned by root and writable only by its owner")
        }
        line.send(pamh, LOG_ERR)
        close(file)
        return .refused
    }
    return .opened(file)
}

/// A directory owned by root and writable only by root. A directory the path only passes
/// through may also be world-writable with the sticky bit (as /tmp): there nobody but root can
/// rename or remove root's entries, and the next directory down must itself be root's, so
/// nobody can swap it. The helper's own directory gets no such exception: a name not yet taken
/// in it could be taken by anyone.
private func isTrustedDirectory(_ fd: Int32, passedThrough: Bool) -> Bool {
    var st = stat()
    guard fstat(fd, &st) == 0, st.st_mode & fileTypeMask == directory, st.st_uid == 0 else { return false }
    if st.st_mode & writableByGroupOrOthers == 0 { return true }
    return passedThrough && st.st_mode & stickyBit != 0
}

/// "refusing to run PATH: DIRECTORY REASON", the directory being the path's first `count` bytes.
private func refuse(_ pamh: OpaquePointer, _ path: UnsafePointer<CChar>, upTo count: Int, _ reason: StaticString) {
    var line = LogLine("refusing to run ")
    line.append(cString: path)
    line.append(": ")
    line.append(path, count: count)
    line.append(" ")
    line.append(reason)
    line.send(pamh, LOG_ERR)
}
