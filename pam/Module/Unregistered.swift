// A user with no registration, answered without the helper (DESIGN.md §2, "A user with no
// registration"). Under `nouserok` the helper's whole work for such a user is to find that the
// `accounts` document does not name them and to answer PAM_IGNORE; a process (or a resident
// helper's child) for that costs more than the rest of the login stack. So the module answers
// itself, but only when it can prove the helper would give the same answer, and otherwise runs
// the helper as before. It holds no model of mpin.conf: what validates the file (the helper,
// mpinctl; MPinLogin's ConfigVerdict) leaves a copy of it in the store, and the module only
// compares.
//
// - the pam.d line holds only arguments modelled here (`nouserok`, for authentication, and
//   those that change nothing for such a user); `debug`, `enrol`, a group, any other key: helper;
// - the user is known to the name service, not root, with a plain ASCII `pw_name`;
// - the store (the line's `store=`, else /var/lib/mpin) is a root-owned directory with no group
//   or world bits, not a symbolic link, and its values read here (`accounts`, `accounts-index`,
//   the path's `config-verdict-…`) are regular root-owned files with no group or world bits,
//   not symbolic links;
// - the index names the size and FNV-1a checksum of the `accounts` value as it is now (so an
//   index left behind by a failed, concurrent or manual write is not believed), and no line of
//   it is the user's `pw_name`, byte for byte;
// - the configuration file passes the helper's own checks of the file (regular, root's, not
//   writable by group or others, under 64 KiB), and the verdict names this path, the store
//   looked in (when the line has no `store=`), and holds these very bytes: a file changed in
//   any way since it was validated is the helper's.
// Anything else, including any failure to open, read or allocate, runs the helper.
import CPAMModule

private let fileTypeMask: UInt32 = 0o170000
private let regularFileType: UInt32 = 0o100000
private let directoryType: UInt32 = 0o040000
/// FileStorage's limit for a value; the configuration's is 64 KiB (ConfigFile.swift).
private let largestValue = 4 << 20
private let largestConfig = 65_536
/// Where the helper keeps the store when neither the line nor the file names one (LoginConfig).
private let defaultStore: StaticString = "/var/lib/mpin"

/// PAM_IGNORE for a user the index proves unregistered, with the helper's own log line, or nil
/// when the helper must decide. Only for root: anyone else cannot read the store.
func answerUnregistered(_ pamh: OpaquePointer, call: UInt8, argc: Int32,
                        argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32? {
    guard geteuid() == 0, let line = ModelledLine(argc: argc, argv: argv) else { return nil }
    let authenticating = call == UInt8(MPIN_PAM_CALL_AUTHENTICATE)
    if authenticating && !line.nouserok { return nil }
    var user: UnsafePointer<CChar>? = nil
    guard pam_get_user(pamh, &user, nil) == PAM_SUCCESS, let user, isPlainName(user) else { return nil }
    guard let account = ordinaryAccount(user) else { return nil }
    defer { free(account) }
    guard storeProvesUnregistered(line, name: account) else { return nil }
    if authenticating {
        // The line PAMSession.logOutcome writes for this outcome.
        var log = LogLine("user=")
        log.append(cString: account)
        log.append(" identity=- outcome=USER_UNKNOWN duration_ms=0 (nouserok: no registration)")
        log.send(pamh, LOG_NOTICE)
    }
    return PAM_IGNORE
}

/// The line's arguments, when each is one this file models.
private struct ModelledLine {
    var nouserok = false
    var configPath: UnsafePointer<CChar> = cString("/etc/mpin/mpin.conf")
    var configNamed = false
    /// `store=PATH` on the line (the last one; each must be absolute, as the helper checks).
    var store: UnsafePointer<CChar>? = nil

    init?(argc: Int32, argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?) {
        for i in 0..<(argc > 0 ? Int(argc) : 0) {
            guard let argument = argv?[i] else { continue }
            if strcmp(argument, cString("nouserok")) == 0 {
                nouserok = true
            } else if strcmp(argument, cString("nouserok_root")) == 0 || strcmp(argument, cString("try_first_pass")) == 0
                        || strcmp(argument, cString("use_first_pass")) == 0 || strcmp(argument, cString("account_fail_open")) == 0
                        || strncmp(argument, cString("helper="), 7) == 0 || strncmp(argument, cString("helper_socket="), 14) == 0 {
                // Root is never answered here, and the others change nothing for a user with no
                // registration.
            } else if strncmp(argument, cString("config="), 7) == 0 {
                // Relative: from the caller's working directory (a sudo user's): the helper's.
                guard argument[7] == 47 else { return nil }
                configPath = argument + 7
                configNamed = true
            } else if strncmp(argument, cString("store="), 6) == 0 {
                guard argument[6] == 47, isPlainValue(argument + 6) else { return nil }
                store = argument + 6
            } else {
                return nil
            }
        }
    }
}

/// Printable ASCII without spaces, at most 256 bytes: a PAM_USER, or a `store=` path, that
/// decodes the same way in the helper and needs no more thought here.
private func isPlainName(_ name: UnsafePointer<CChar>) -> Bool {
    var i = 0
    while name[i] != 0 {
        let byte = UInt8(bitPattern: name[i])
        guard byte > 32, byte < 127, i < 256 else { return false }
        i += 1
    }
    return i > 0
}

private func isPlainValue(_ value: UnsafePointer<CChar>) -> Bool { isPlainName(value) }

/// `pw_name` of `user` (malloc'd) when the name service knows it, it is not root and the name
/// is plain ASCII; else nil (an unknown user, root and a failing name service are the helper's).
private func ordinaryAccount(_ user: UnsafePointer<CChar>) -> UnsafeMutablePointer<CChar>? {
    let size = 16_384
    guard let buffer = malloc(size)?.assumingMemoryBound(to: CChar.self) else { return nil }
    defer { free(buffer) }
    var entry = passwd()
    var found: UnsafeMutablePointer<passwd>? = nil
    guard getpwnam_r(user, &entry, buffer, size, &found) == 0, let found, found.pointee.pw_uid != 0,
          let name = found.pointee.pw_name, isPlainName(name) else { return nil }
    return copyCString(UnsafeRawPointer(name).assumingMemoryBound(to: UInt8.self), strlen(name))
}

/// Whether the store the line names holds a valid index of its `accounts` value that has no line
/// equal to `name`, and a verdict on the configuration file as it is now.
private func storeProvesUnregistered(_ line: ModelledLine, name: UnsafePointer<CChar>) -> Bool {
    let directory = mpin_openat(AT_FDCWD, line.store ?? cString(defaultStore), Int32(MPIN_OPEN_STORE))
    guard directory >= 0 else { return false }
    defer { close(directory) }
    var info = stat()
    guard fstat(directory, &info) == 0, UInt32(info.st_mode) & fileTypeMask == directoryType, info.st_uid == 0,
          UInt32(info.st_mode) & 0o077 == 0 else { return false }
    guard let index = readValue(directory, cString("state-accounts-index")) else { return false }
    defer { free(index.bytes) }
    // The names first: a listed name (a registered user's login, the usual one) goes to the
    // helper whatever the header says, without reading or hashing `accounts`.
    var body = 0
    while body < index.count && index.bytes[body] != 10 { body += 1 }
    body += 1
    let nameLength = strlen(name)
    var start = body
    while start < index.count {
        var end = start
        while end < index.count && index.bytes[end] != 10 { end += 1 }
        guard end < index.count else { return false }  // every line ends with a newline
        if end - start == nameLength && memcmp(index.bytes + start, name, nameLength) == 0 { return false }
        start = end + 1
    }
    // Not listed: believed only if the configuration is the one validated, and the header
    // names `accounts` as it is now, and these names.
    guard verdictHolds(directory, line) else { return false }
    guard let accounts = readValue(directory, cString("state-accounts")) else { return false }
    let checksum = fnv1a64(accounts.bytes, accounts.count)
    let accountsSize = accounts.count
    free(accounts.bytes)
    return indexBody(index.bytes, index.count, size: accountsSize, checksum: checksum) == body
}

/// Where the names start, when the header is `mpin-accounts-index 1 SIZE CHECKSUM NAMES`
/// (decimal, then two checksums of 16 lowercase hex digits), names this size and checksum of
/// `accounts`, and NAMES is the checksum of the lines after it (so that no line was taken out).
private func indexBody(_ bytes: UnsafeMutablePointer<UInt8>, _ count: Int, size: Int, checksum: UInt64) -> Int? {
    let header: StaticString = "mpin-accounts-index 1 "
    let prefix = header.utf8CodeUnitCount
    guard count > prefix, memcmp(bytes, header.utf8Start, prefix) == 0 else { return nil }
    var i = prefix
    var value = 0
    while i < count && bytes[i] >= 48 && bytes[i] <= 57 {
        guard i - prefix < 9 else { return nil }  // the value's limit is 4 MiB: at most 7 digits
        value = value &* 10 &+ Int(bytes[i] &- 48)
        i += 1
    }
    guard i > prefix, value == size, i < count, bytes[i] == 32 else { return nil }
    i += 1
    guard let documentHash = hex64(bytes, count, &i), documentHash == checksum, i < count, bytes[i] == 32 else { return nil }
    i += 1
    guard let namesHash = hex64(bytes, count, &i), i < count, bytes[i] == 10 else { return nil }
    i += 1
    guard fnv1a64(bytes + i, count - i) == namesHash else { return nil }
    return i
}

/// Sixteen lowercase hex digits at `bytes[i...]` as a number, `i` moved past them; nil if
/// there are not sixteen.
private func hex64(_ bytes: UnsafeMutablePointer<UInt8>, _ count: Int, _ i: inout Int) -> UInt64? {
    var hash: UInt64 = 0
    for _ in 0..<16 {
        guard i < count else { return nil }
        let c = bytes[i]
        let digit: UInt8
        if c >= 48 && c <= 57 { digit = c &- 48 } else if c >= 97 && c <= 102 { digit = c &- 87 } else { return nil }
        hash = hash << 4 | UInt64(digit)
        i += 1
    }
    return hash
}

/// AccountMap.fnv1a64.
private func fnv1a64(_ bytes: UnsafeMutablePointer<UInt8>, _ count: Int) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for i in 0..<count {
        hash ^= UInt64(bytes[i])
        hash = hash &* 0x0000_0100_0000_01b3
    }
    return hash
}

/// The whole value `name` of the store open at `directory`, as FileStorage reads it: a regular
/// file (never through a symbolic link) of root's with no group or world bits, at most 4 MiB.
private func readValue(_ directory: Int32, _ name: UnsafePointer<CChar>) -> (bytes: UnsafeMutablePointer<UInt8>, count: Int)? {
    let fd = mpin_openat(directory, name, Int32(MPIN_OPEN_VALUE))
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0, UInt32(info.st_mode) & fileTypeMask == regularFileType, info.st_uid == 0,
          UInt32(info.st_mode) & 0o077 == 0, info.st_size >= 0, Int(info.st_size) <= largestValue else { return nil }
    let size = Int(info.st_size)
    // One byte more: a file that grew since fstat is seen, and refused.
    guard let bytes = malloc(size + 1)?.assumingMemoryBound(to: UInt8.self) else { return nil }
    guard let used = readAll(fd, bytes, size + 1), used == size else {
        free(bytes)
        return nil
    }
    return (bytes, size)
}

/// Reads until end of file or `capacity` bytes; nil on an error.
private func readAll(_ fd: Int32, _ buffer: UnsafeMutablePointer<UInt8>, _ capacity: Int) -> Int? {
    var used = 0
    while used < capacity {
        let n = read(fd, buffer + used, capacity - used)
        if n < 0 {
            if mpin_errno() == EINTR { continue }
            return nil
        }
        if n == 0 { break }
        used += n
    }
    return used
}

/// `state-config-verdict-` and the FNV-1a checksum of `path` in 16 lowercase hex digits: the
/// file name of the path's verdict (ConfigVerdict.document(for:)), malloc'd.
private func verdictName(_ path: UnsafePointer<CChar>) -> UnsafeMutablePointer<CChar>? {
    let prefix: StaticString = "state-config-verdict-"
    let length = prefix.utf8CodeUnitCount
    guard let name = malloc(length + 17)?.assumingMemoryBound(to: CChar.self) else { return nil }
    memcpy(name, prefix.utf8Start, length)
    var hash = fnv1a64(UnsafeMutableRawPointer(mutating: path).assumingMemoryBound(to: UInt8.self), strlen(path))
    for i in stride(from: length + 15, through: length, by: -1) {
        let digit = UInt8(hash & 0xf)
        name[i] = CChar(bitPattern: digit < 10 ? 48 + digit : 87 + digit)
        hash >>= 4
    }
    name[length + 16] = 0
    return name
}

/// Whether the store open at `directory` holds a verdict (MPinLogin's ConfigVerdict) on the
/// line's configuration file with the file's bytes as they are now: `mpin-config-verdict 1`,
/// `path PATH`, `store DIR` (the store looked in, unless the line names it: the file's own
/// store is then overridden), `file SIZE` or `file none`, then the bytes. Only compared.
private func verdictHolds(_ directory: Int32, _ line: ModelledLine) -> Bool {
    guard let name = verdictName(line.configPath) else { return false }
    defer { free(name) }
    guard let verdict = readValue(directory, name) else { return false }
    defer { free(verdict.bytes) }
    var expected = Expected(verdict.bytes, verdict.count)
    guard expected.take("mpin-config-verdict 1\npath "), expected.take(line.configPath), expected.take("\nstore ") else {
        return false
    }
    if line.store == nil {
        guard expected.take(cString(defaultStore)), expected.take("\n") else { return false }
    } else {
        guard expected.skipLine() else { return false }
    }
    guard expected.take("file ") else { return false }
    let fd = mpin_openat(AT_FDCWD, line.configPath, Int32(MPIN_OPEN_CONFIG))
    if fd < 0 {
        // The helper reads no file only when the default one does not exist.
        return mpin_errno() == ENOENT && !line.configNamed && expected.take("none\n") && expected.atEnd
    }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0, UInt32(info.st_mode) & fileTypeMask == regularFileType, info.st_uid == 0,
          UInt32(info.st_mode) & 0o022 == 0, info.st_size >= 0, Int(info.st_size) < largestConfig,
          let text = malloc(largestConfig)?.assumingMemoryBound(to: UInt8.self) else { return false }
    defer { free(text) }
    guard let used = readAll(fd, text, largestConfig), used < largestConfig else { return false }
    return expected.takeDecimal(used) && expected.take("\n") && expected.take(text, used) && expected.atEnd
}

/// A document read front to back against what it must hold.
private struct Expected {
    let bytes: UnsafeMutablePointer<UInt8>
    let count: Int
    var position = 0

    init(_ bytes: UnsafeMutablePointer<UInt8>, _ count: Int) {
        self.bytes = bytes
        self.count = count
    }

    var atEnd: Bool { position == count }

    /// Whether the next `n` bytes are `other`'s; if so, moves past them.
    mutating func take(_ other: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        guard n <= count - position, memcmp(bytes + position, other, n) == 0 else { return false }
        position += n
        return true
    }

    mutating func take(_ text: StaticString) -> Bool { take(text.utf8Start, text.utf8CodeUnitCount) }

    mutating func take(_ text: UnsafePointer<CChar>) -> Bool {
        take(UnsafeRawPointer(text).assumingMemoryBound(to: UInt8.self), strlen(text))
    }

    /// `value` in decimal, as Swift's `String(_:)` writes it (no sign, no leading zero).
    mutating func takeDecimal(_ value: Int) -> Bool {
        let start = position
        var read = 0
        // A size under 64 KiB has at most five digits; more are never this value.
        while position < count, position - start < 6, bytes[position] >= 48, bytes[position] <= 57 {
            read = read * 10 + Int(bytes[position] &- 48)
            position += 1
        }
        let digits = position - start
        return digits > 0 && digits < 6 && (bytes[start] != 48 || digits == 1) && read == value
    }

    /// Moves past the rest of the current line and its newline; false if there is none.
    mutating func skipLine() -> Bool {
        while position < count {
            defer { position += 1 }
            if bytes[position] == 10 { return true }
        }
        return false
    }
}

/// A malloc'd, NUL-terminated copy of `count` bytes.
private func copyCString(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> UnsafeMutablePointer<CChar>? {
    guard let copy = malloc(count + 1)?.assumingMemoryBound(to: CChar.self) else { return nil }
    memcpy(copy, bytes, count)
    copy[count] = 0
    return copy
}
