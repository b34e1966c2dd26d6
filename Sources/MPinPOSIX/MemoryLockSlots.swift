// A bound on the memory that logins waiting at a PIN prompt keep locked (docs/SECURITY.md §3,
// "locked memory"). A helper started for a login locks every page it touches before it asks
// for the PIN (mlockall: the token it has read and the PIN stay out of swap), about 12 MB of
// unswappable memory for as long as the prompt waits. Anyone who can start PAM logins (`su`,
// `sudo`, ssh connections) can keep many prompts open, so only `count` helpers at a time hold
// that memory: each holds one of `count` slot files, flock'd, in a directory of root's, until
// it exits (the kernel drops the lock with the process, so a killed helper frees its slot).
// A login that finds every slot taken goes on without the lock, as a helper without
// CAP_IPC_LOCK does, and says so in the log.

#if canImport(Glibc)
import Glibc
#endif

package enum MemoryLockSlots {
    /// Where the slot files are: root's, 0700, made on first use.
    package static let directory = "/run/mpin/memlock"
    /// How many helpers may hold locked memory at once: 16 × ~12 MB.
    package static let count = 16

    /// Takes a free slot and keeps it until the process exits; false when every slot is taken,
    /// or the directory is not root's alone (then no slot can be trusted to mean anything).
    package static func take(directory: String = directory, count: Int = count) -> Bool {
        guard prepare(directory) else { return false }
        for index in 0..<count {
            let fd = open(directory + "/slot-\(index)", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard fd >= 0 else { continue }
            if let status = FileStatus(descriptor: fd), status.owner == 0, status.mode & 0o170000 == 0o100000,
               (try? retryingOnInterrupt({ flock(fd, LOCK_EX | LOCK_NB) })) != nil {
                return true  // the descriptor stays open: the slot is this process's until it exits
            }
            close(fd)
        }
        return false
    }

    /// Makes `directory` and its parent (root's, 0700 and 0755) when missing, and checks that
    /// the directory is a real directory of root's that nobody else may write.
    private static func prepare(_ directory: String) -> Bool {
        var parent = Substring(directory)
        while parent.last == "/" { parent = parent.dropLast() }
        if let slash = parent.lastIndex(of: "/"), slash != parent.startIndex {
            _ = mkdir(String(parent[..<slash]), 0o755)
        }
        _ = mkdir(directory, 0o700)
        var st = stat()
        guard lstat(directory, &st) == 0 else { return false }
        let mode = UInt32(st.st_mode)
        return mode & 0o170000 == 0o040000 && st.st_uid == 0 && mode & 0o022 == 0
    }
}
