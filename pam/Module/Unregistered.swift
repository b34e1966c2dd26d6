// A user with no registration, answered without the helper (issue 27 item 2). Under `nouserok`
// the helper's whole work for such a user is to find that the `accounts` document does not
// name them and to answer PAM_IGNORE; a process (or a resident helper's child) for that costs
// more than the rest of the login stack. So the module answers itself, but only when it can
// prove the helper would give the same answer, and otherwise runs the helper as before:
//
// - the pam.d line holds only arguments modelled here (`nouserok`, for authentication, and
//   those that change nothing for such a user); `debug`, `enrol`, a group, any other key: helper;
// - the configuration file passes the helper's own checks (ConfigFile.swift: regular, root's,
//   not writable by group or others, under 64 KiB) and every line of it is one the helper
//   accepts in a form read here (plain numbers, ASCII values; `verdict_key` in the form the
//   helper checks when it reads the file: `04` and 128 hex digits; `mode` token or auto); `mode = device`,
//   `enrol = yes`, `require_group`, `exempt_group`, `enrol_identity`, anything unknown,
//   repeated or odd: helper;
// - the user is known to the name service, not root, with a plain ASCII `pw_name`;
// - the store is a root-owned directory with no group or world bits, not a symbolic link, and
//   its `accounts` value and the index mpinctl writes beside it (`accounts-index`, AccountMap
//   .swift) are regular root-owned files with no group or world bits, not symbolic links;
// - the index names the size and FNV-1a checksum of the `accounts` value as it is now (so an
//   index left behind by a failed, concurrent or manual write is not believed), and no line of
//   it is the user's `pw_name`, byte for byte.
// Anything else, including any failure to open, read or allocate, runs the helper.
import CPAMModule

private let fileTypeMask: UInt32 = 0o170000
private let regularFileType: UInt32 = 0o100000
private let directoryType: UInt32 = 0o040000
/// FileStorage's limit for a value; the configuration's is 64 KiB (ConfigFile.swift).
private let largestValue = 4 << 20
private let largestConfig = 65_536

/// PAM_IGNORE for a user the index proves unregistered, with the helper's own log line, or nil
/// when the helper must decide. Only for root: anyone else cannot read the store.
func answerUnregistered(_ pamh: OpaquePointer, call: UInt8, argc: Int32,
                        argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32? {
    guard geteuid() == 0, let line = ModelledLine(argc: argc, argv: argv) else { return nil }
    let authenticating = call == UInt8(MPIN_PAM_CALL_AUTHENTICATE)
    if authenticating && !line.nouserok { return nil }
    guard let store = configuredStore(line) else { return nil }
    defer { free(store) }
    var user: UnsafePointer<CChar>? = nil
    guard pam_get_user(pamh, &user, nil) == PAM_SUCCESS, let user, isPlainName(user) else { return nil }
    guard let account = ordinaryAccount(user) else { return nil }
    defer { free(account) }
    guard indexOmits(store: store, name: account) else { return nil }
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

/// The store the helper would use: the line's `store=`, else the file's, else /var/lib/mpin;
/// nil unless the configuration file is one the helper accepts and this file fully models.
/// Returned malloc'd and NUL-terminated.
private func configuredStore(_ line: ModelledLine) -> UnsafeMutablePointer<CChar>? {
    var fromFile: UnsafeMutablePointer<CChar>? = nil
    let fd = mpin_openat(AT_FDCWD, line.configPath, Int32(MPIN_OPEN_CONFIG))
    if fd < 0 {
        // The helper reads no file only when the default one does not exist.
        guard mpin_errno() == ENOENT, !line.configNamed else { return nil }
    } else {
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, UInt32(info.st_mode) & fileTypeMask == regularFileType, info.st_uid == 0,
              UInt32(info.st_mode) & 0o022 == 0, info.st_size >= 0, Int(info.st_size) < largestConfig,
              let text = malloc(largestConfig)?.assumingMemoryBound(to: UInt8.self) else { return nil }
        defer { free(text) }
        guard let used = readAll(fd, text, largestConfig), used < largestConfig else { return nil }
        var settings = ConfigSettings()
        guard settings.parse(text, used) else { return nil }
        if line.store == nil, let store = settings.store {
            fromFile = copyCString(text + store.start, store.count)
            guard fromFile != nil else { return nil }
        }
    }
    if let store = line.store {
        free(fromFile)
        return copyCString(UnsafeRawPointer(store).assumingMemoryBound(to: UInt8.self), strlen(store))
    }
    return fromFile ?? copyCString(UnsafeRawPointer(cString("/var/lib/mpin")).assumingMemoryBound(to: UInt8.self), 13)
}

/// The keys of mpin.conf this file reads, in one table so that a repeated key can be told.
private enum Key: Int {
    case backend, connectTimeout, rpsPrefix, store, timeout, caFile, caPath, trustedDomains, mode, deviceTimeout,
         prompt, pinLength, enrol, verdictKey
}

/// mpin.conf as far as this file models it: LoginConfig.parse's grammar (`key = value`, `#`
/// comments, spaces, tabs and carriage returns trimmed), each value checked as its setter
/// checks it, or more strictly.
private struct ConfigSettings {
    var store: (start: Int, count: Int)? = nil
    private var seen: UInt32 = 0

    /// Whether every line of `text` is one the helper accepts and that leaves a user with no
    /// registration to `nouserok`.
    mutating func parse(_ text: UnsafeMutablePointer<UInt8>, _ count: Int) -> Bool {
        var lineStart = 0
        while lineStart <= count {
            var lineEnd = lineStart
            while lineEnd < count && text[lineEnd] != 10 { lineEnd += 1 }
            var (start, end) = trimmed(text, lineStart, lineEnd)
            if start < end && text[start] != 35 {  // not "#"
                var equals = start
                while equals < end && text[equals] != 61 { equals += 1 }  // "="
                guard equals < end else { return false }
                let key = trimmed(text, start, equals)
                (start, end) = trimmed(text, equals + 1, end)
                guard accept(text, key: key, value: (start, end)) else { return false }
            }
            lineStart = lineEnd + 1
        }
        return true
    }

    private mutating func accept(_ text: UnsafeMutablePointer<UInt8>, key: (Int, Int), value: (Int, Int)) -> Bool {
        let v = text + value.0
        let n = value.1 - value.0
        for i in 0..<n where v[i] < 32 || v[i] > 126 { return false }
        guard let known = Self.key(text + key.0, key.1 - key.0) else { return false }
        let bit: UInt32 = 1 << UInt32(known.rawValue)
        guard seen & bit == 0 else { return false }
        seen |= bit
        switch known {
        case .backend: return isBackendList(v, n)
        case .connectTimeout: return isSeconds(v, n, atMost: 60)
        case .timeout: return isSeconds(v, n, atMost: 300)
        case .deviceTimeout: return isSeconds(v, n, atMost: 600)
        case .rpsPrefix, .trustedDomains: return true
        case .store:
            store = (value.0, n)
            return n > 0 && v[0] == 47
        case .caFile, .caPath: return n > 0 && v[0] == 47
        // `auto` is `token` for a user the store does not name (LoginMode.resolved).
        case .mode: return equals(v, n, "token") || equals(v, n, "auto")
        case .prompt: return n >= 1 && n <= 80
        case .pinLength: return n == 1 && v[0] >= 52 && v[0] <= 56  // 4 to 8
        case .enrol: return equals(v, n, "no")
        case .verdictKey: return isVerdictKeyForm(v, n)
        }
    }

    private static func key(_ k: UnsafeMutablePointer<UInt8>, _ n: Int) -> Key? {
        if equals(k, n, "backend") { return .backend }
        if equals(k, n, "connect_timeout") { return .connectTimeout }
        if equals(k, n, "rps_prefix") { return .rpsPrefix }
        if equals(k, n, "store") { return .store }
        if equals(k, n, "timeout") { return .timeout }
        if equals(k, n, "cacert") { return .caFile }
        if equals(k, n, "capath") { return .caPath }
        if equals(k, n, "trusted_domains") { return .trustedDomains }
        if equals(k, n, "mode") { return .mode }
        if equals(k, n, "device_timeout") { return .deviceTimeout }
        if equals(k, n, "prompt") { return .prompt }
        if equals(k, n, "pin_length") { return .pinLength }
        if equals(k, n, "enrol") { return .enrol }
        if equals(k, n, "verdict_key") { return .verdictKey }
        return nil
    }

    /// `text[start..<end]` without leading and trailing spaces, tabs and carriage returns.
    private func trimmed(_ text: UnsafeMutablePointer<UInt8>, _ start: Int, _ end: Int) -> (Int, Int) {
        var (s, e) = (start, end)
        while s < e && isBlank(text[s]) { s += 1 }
        while e > s && isBlank(text[e - 1]) { e -= 1 }
        return (s, e)
    }
}

private func isBlank(_ byte: UInt8) -> Bool { byte == 32 || byte == 9 || byte == 13 }

private func equals(_ bytes: UnsafeMutablePointer<UInt8>, _ count: Int, _ word: StaticString) -> Bool {
    count == word.utf8CodeUnitCount && memcmp(bytes, word.utf8Start, count) == 0
}

/// One or more `http://` or `https://` URLs separated by commas (spaces around them allowed).
/// Stricter than the helper, which also skips empty items.
private func isBackendList(_ v: UnsafeMutablePointer<UInt8>, _ n: Int) -> Bool {
    var start = 0
    while start <= n {
        var end = start
        while end < n && v[end] != 44 { end += 1 }  // ","
        var s = start
        while s < end && v[s] == 32 { s += 1 }
        let rest = end - s
        let plain = rest >= 7 && memcmp(v + s, cString("http://"), 7) == 0
        let secure = rest >= 8 && memcmp(v + s, cString("https://"), 8) == 0
        guard plain || secure else { return false }
        start = end + 1
    }
    return true
}

/// A number of seconds in (0, atMost], written as up to six digits with an optional fraction
/// of up to six ("3", "0.5"): forms Swift's `Double(_:)` reads as this value. Other forms, which
/// the helper may well accept, are left to it.
private func isSeconds(_ v: UnsafeMutablePointer<UInt8>, _ n: Int, atMost limit: Int) -> Bool {
    var i = 0
    var whole = 0
    while i < n && v[i] >= 48 && v[i] <= 57 {
        guard i < 6 else { return false }
        whole = whole &* 10 &+ Int(v[i] &- 48)
        i += 1
    }
    guard i > 0 else { return false }
    var fraction = false
    if i < n {
        guard v[i] == 46 else { return false }  // "."
        i += 1
        var digits = 0
        while i < n && v[i] >= 48 && v[i] <= 57 {
            guard digits < 6 else { return false }
            if v[i] != 48 { fraction = true }
            digits += 1
            i += 1
        }
        guard digits > 0, i == n else { return false }
    }
    guard whole > 0 || fraction else { return false }
    return whole < limit || (whole == limit && !fraction)
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

/// Whether the store at `store` holds a valid index of its `accounts` value that has no line
/// equal to `name`.
private func indexOmits(store: UnsafePointer<CChar>, name: UnsafePointer<CChar>) -> Bool {
    let directory = mpin_openat(AT_FDCWD, store, Int32(MPIN_OPEN_STORE))
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
    // Not listed: believed only if the header names `accounts` as it is now, and these names.
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

/// A malloc'd, NUL-terminated copy of `count` bytes.
private func copyCString(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> UnsafeMutablePointer<CChar>? {
    guard let copy = malloc(count + 1)?.assumingMemoryBound(to: CChar.self) else { return nil }
    memcpy(copy, bytes, count)
    copy[count] = 0
    return copy
}

/// LoginConfig's `verdict_key` check (LoginConfig.isVerdictKeyForm): `04`, then 128 hex digits.
private func isVerdictKeyForm(_ v: UnsafeMutablePointer<UInt8>, _ n: Int) -> Bool {
    guard n == 130, v[0] == 48, v[1] == 52 else { return false }  // "04"
    for i in 2..<n {
        let c = v[i]
        guard (c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70) else { return false }
    }
    return true
}
