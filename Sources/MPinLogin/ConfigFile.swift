#if canImport(Glibc)
import Glibc
#endif
import MPinPOSIX

/// Reads a configuration file the way a PAM module must: whoever can write it chooses the
/// backend, and a backend of their choosing would accept any PIN. So the file must be a
/// regular file owned by root and not writable by group or others (as pam_u2f requires of
/// its files), at most 64 KiB, and opening it never blocks (a FIFO is refused, not waited on).
package enum ConfigFile {
    /// The text, nil when the file does not exist, or a ConfigError saying what is wrong.
    package static func read(_ path: String, requiredOwner: uid_t = 0) throws(ConfigError) -> String? {
        try readBytes(path, requiredOwner: requiredOwner).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The file's bytes, as `read` checks and reads them (what ConfigVerdict records).
    package static func readBytes(_ path: String, requiredOwner: uid_t = 0) throws(ConfigError) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw ConfigError(file: path, line: 0, message: "cannot open the configuration file (errno \(errno))")
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
            throw ConfigError(file: path, line: 0, message: "not a regular file")
        }
        guard st.st_uid == requiredOwner, st.st_mode & 0o022 == 0 else {
            throw ConfigError(file: path, line: 0, message:
                "must be owned by uid \(requiredOwner) and not writable by group or others (fix: chown root:root \(path) && chmod 644 \(path))")
        }
        var bytes = [UInt8](repeating: 0, count: 65_536)
        let used: Int
        do {
            used = try readFully(fd, into: &bytes)
        } catch {
            throw ConfigError(file: path, line: 0, message: "cannot read the configuration file (errno \(error.code))")
        }
        guard used < bytes.count else { throw ConfigError(file: path, line: 0, message: "larger than 64 KiB") }
        return Array(bytes[..<used])
    }
}
