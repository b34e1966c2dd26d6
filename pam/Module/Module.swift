// pam_mpin.so: M-Pin's PAM entry points, in Embedded Swift (no Swift runtime library, no
// existentials, no String: C strings and fixed buffers only; see pam_mpin(8)).
//
// The login itself (configuration, the store, the M-Pin protocol over libcurl, the crypto) is
// Swift too, in mpin-pam-helper, which this module runs once per call, as pam_unix runs
// unix_chkpwd. So sshd, sudo and login map only this small module, not a Swift runtime and
// libcurl, an upgrade of the login needs no restart of long-lived PAM users, and a crash or a
// hang in the login costs one failed call, never the caller's process. This module only
// relays, over the protocol in Sources/CPAMProtocol/mpin_pam_protocol.h: the helper's
// questions to the conversation, its log lines to pam_syslog, its result to libpam. As root it
// first asks the resident helper (`mpin-pam-helper --serve`, Resident.swift), a process already
// started, and runs the helper file only when that one is absent, not root's, or declines.
//
// Like every PAM module it lives inside someone else's process: it prints nothing, leaves no
// thread and no child behind (it waits only for its own helper's pid), keeps the caller's
// signal dispositions (SIGCHLD is set to the default only while its child runs, as pam_unix
// does), never blocks past the helper's announced budget (its own reads, for a user it
// answers without the helper, are of local root-owned files and one name-service lookup, as
// sshd and sudo make before PAM: Unregistered.swift), and wipes the answers it relays
// (PINs) before freeing them. Nothing read from the helper reaches arithmetic that can
// overflow or an unchecked index (Frame.swift): a trap here would kill sshd's child.
import CPAMModule

@_cdecl("pam_sm_authenticate")
public func pamSmAuthenticate(_ handle: OpaquePointer?, _ flags: Int32, _ argc: Int32,
                              _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard let handle else { return PAM_SERVICE_ERR }
    // An application's own retries on the same handle (sudo asks three times, whatever
    // PAM_MAXTRIES says; sshd's keyboard-interactive tries) after this module ended the login
    // with PAM_MAXTRIES (a wrong PIN that left one attempt, or a blocked identity): answered at
    // once, unasked, so that no retry spends the identity's last attempt. A new login (a new
    // handle) asks again, its prompt saying that the attempt is the last.
    var ended: UnsafeRawPointer? = nil
    if pam_get_data(handle, maxTriesKey, &ended) == PAM_SUCCESS, ended != nil {
        LogLine("outcome=MAXTRIES (this login ended at the last attempt; the application's retry is not asked)").send(handle, LOG_NOTICE)
        return PAM_MAXTRIES
    }
    let code = runHelper(handle, call: UInt8(MPIN_PAM_CALL_AUTHENTICATE), flags: flags, argc: argc, argv: argv)
    if code == PAM_MAXTRIES {
        // Any non-null pointer marks the handle; there is nothing to free.
        _ = pam_set_data(handle, maxTriesKey, UnsafeMutableRawPointer(bitPattern: 1), nil)
    }
    return code
}

/// The handle's mark that the module ended its login with PAM_MAXTRIES.
private let maxTriesKey: UnsafePointer<CChar> = cString("pam_mpin_maxtries")

@_cdecl("pam_sm_setcred")
public func pamSmSetcred(_ handle: OpaquePointer?, _ flags: Int32, _ argc: Int32,
                         _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    PAM_SUCCESS
}

/// Refuses identities the store marks BLOCKED; no opinion (PAM_IGNORE) on anyone else.
@_cdecl("pam_sm_acct_mgmt")
public func pamSmAcctMgmt(_ handle: OpaquePointer?, _ flags: Int32, _ argc: Int32,
                          _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard let handle else { return PAM_SERVICE_ERR }
    return runHelper(handle, call: UInt8(MPIN_PAM_CALL_ACCOUNT), flags: flags, argc: argc, argv: argv)
}

/// A registered user's new PIN (`passwd`); PAM_IGNORE for anyone else (the helper decides).
@_cdecl("pam_sm_chauthtok")
public func pamSmChauthtok(_ handle: OpaquePointer?, _ flags: Int32, _ argc: Int32,
                           _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard let handle else { return PAM_SERVICE_ERR }
    return runHelper(handle, call: UInt8(MPIN_PAM_CALL_CHAUTHTOK), flags: flags, argc: argc, argv: argv)
}

/// One call: as root, through the resident helper if one listens (Resident.swift); otherwise,
/// or when it does not take the call, check and open the helper file, start it, send START,
/// relay until its RESULT, reap it.
func runHelper(_ pamh: OpaquePointer, call: UInt8, flags: Int32, argc: Int32,
               argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    // The START frame's length: the call, the flags (4 bytes big-endian), the arguments with
    // their NULs. It is sent from the arguments themselves (Helper.sendStart), not a copy.
    let maximum = Int(MPIN_PAM_MAX_PAYLOAD)
    let count = argc > 0 ? Int(argc) : 0
    var length = 1 + Int(MPIN_PAM_FLAGS_SIZE)
    for i in 0..<count {
        guard let argument = argv?[i] else { continue }
        let n = strlen(argument)
        guard n < maximum, length <= maximum - n - 1 else {
            LogLine("the module's arguments are too long").send(pamh, LOG_ERR)
            return PAM_SERVICE_ERR
        }
        length += n + 1
    }
    let start = StartFrame(call: call, flags: flags, length: length, count: count, argv: argv)

    // A user the store's index proves unregistered, where the line and the configuration are
    // ones the module models (Unregistered.swift): the helper's answer, without the helper.
    if let code = answerUnregistered(pamh, call: call, argc: argc, argv: argv) { return code }
    // The resident helper serves root only (it refuses anyone else), so only root asks it.
    if geteuid() == 0, let socketPath = residentSocketPath(argc: argc, argv: argv),
       let code = callResident(pamh, socketPath, start) {
        return code
    }
    return spawnHelper(pamh, helperPath(argc: argc, argv: argv), start)
}

/// What START carries: the call, its flags and the line's arguments, `length` bytes in all.
struct StartFrame {
    var call: UInt8
    var flags: Int32
    var length: Int
    var count: Int
    var argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?
}

/// The helper file at `path`, trust-checked and run for this one call.
func spawnHelper(_ pamh: OpaquePointer, _ path: UnsafePointer<CChar>, _ start: StartFrame) -> Int32 {
    let executable: Int32
    switch openTrustedHelper(pamh, path) {
    case .opened(let fd): executable = fd
    case .refused: return PAM_SERVICE_ERR
    case .outOfMemory: return PAM_BUF_ERR
    }
    defer { close(executable) }

    var savedChild = sigaction()
    mpin_sigchld_default(&savedChild)
    defer { mpin_sigchld_restore(&savedChild) }

    var helper = Helper()
    guard helper.start(pamh, path: path, executable: executable) else { return PAM_SERVICE_ERR }
    helper.deadline = monotonicMilliseconds() &+ Int64(MPIN_PAM_FIRST_WATCHDOG_MS)
    var outcome: Outcome = .failed(.ended)  // a START that cannot be sent: the helper has gone
    if helper.sendStart(start) {
        outcome = helper.relay(pamh)
    }
    let status: Int32
    if case .result = outcome { status = helper.reap(finished: true) } else { status = helper.reap(finished: false) }
    close(helper.fd)
    switch outcome {
    case .result(let code):
        return code
    case .failed(let why):
        return reportFailure(pamh, path, why, status: status)
    }
}

/// Logs why a call ended without the helper's result ("PATH stopped: ..."; a signal that ended
/// a spawned helper, other than the module's own SIGKILL, is named) and returns its PAM code.
func reportFailure(_ pamh: OpaquePointer, _ path: UnsafePointer<CChar>, _ why: Failure, status: Int32) -> Int32 {
    var line = LogLine()
    line.append(cString: path)
    let signal = status & 0x7f
    if signal != 0 && signal != 0x7f && signal != SIGKILL {
        line.append(" stopped: signal ")
        line.append(number: Int64(signal))
    } else {
        line.append(" stopped: ")
        line.append(why.message)
    }
    line.send(pamh, LOG_ERR)
    return why == .outOfMemory ? PAM_BUF_ERR : PAM_SERVICE_ERR
}

/// The helper named on the line (helper=PATH), else the installed one.
func helperPath(argc: Int32, argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> UnsafePointer<CChar> {
    var path: UnsafePointer<CChar> = mpin_default_helper()
    let key = cString("helper=")
    for i in 0..<(argc > 0 ? Int(argc) : 0) {
        if let argument = argv?[i], strncmp(argument, key, 7) == 0 { path = argument + 7 }
    }
    return path
}

// MARK: The helper process

/// Why a call ended without the helper's result.
enum Failure: Equatable {
    case timedOut, pollFailed, readFailed, ended, brokeProtocol, outOfMemory

    var message: StaticString {
        switch self {
        case .timedOut: return "it did not answer in time"
        case .pollFailed: return "poll failed"
        case .readFailed: return "read failed"
        case .ended: return "it ended without a result"
        case .brokeProtocol: return "it broke the protocol"
        case .outOfMemory: return "out of memory"
        }
    }
}

enum Outcome {
    case result(Int32)
    case failed(Failure)
}

struct Helper {
    var pid: pid_t = -1
    var fd: Int32 = -1
    /// CLOCK_MONOTONIC milliseconds; the helper is stopped when it is silent past this.
    var deadline: Int64 = 0
    /// Whether a whole frame header came: until then a resident helper that closes has done
    /// nothing of the call (no question asked, no PIN seen), and the module may run it again.
    var heard = false

    /// Starts the file `executable` was opened on (never its path again: the checked file is
    /// the one that runs) with one end of a socket pair as fd 0, /dev/null as stdout and
    /// stderr, no other descriptor of the caller's, every signal at its default, nothing
    /// blocked, and an environment of its own (the caller's, under sudo, is partly the user's).
    mutating func start(_ pamh: OpaquePointer, path: UnsafePointer<CChar>, executable: Int32) -> Bool {
        var pair: (Int32, Int32) = (-1, -1)
        let made = withUnsafeMutablePointer(to: &pair) {
            $0.withMemoryRebound(to: Int32.self, capacity: 2) { socketpair(AF_UNIX, Int32(MPIN_SOCKET_TYPE), 0, $0) }
        }
        guard made == 0 else {
            logError(pamh, "socketpair: ", nil, errno: mpin_errno())
            return false
        }
        // Everything the child needs exists before the fork: it allocates nothing.
        var arguments: (UnsafeMutablePointer<CChar>?, UnsafeMutablePointer<CChar>?) = (mutableCString("mpin-pam-helper"), nil)
        // A crash is reported by the module (exit status); Swift's backtracer would only add
        // seconds to a failed login.
        var environment: (UnsafeMutablePointer<CChar>?, UnsafeMutablePointer<CChar>?, UnsafeMutablePointer<CChar>?) =
            (mutableCString("PATH=/usr/sbin:/usr/bin:/sbin:/bin"), mutableCString("SWIFT_BACKTRACE=enable=no"), nil)
        let child = withUnsafeMutablePointer(to: &arguments) { argv in
            withUnsafeMutablePointer(to: &environment) { envp in
                argv.withMemoryRebound(to: UnsafeMutablePointer<CChar>?.self, capacity: 2) { argv in
                    envp.withMemoryRebound(to: UnsafeMutablePointer<CChar>?.self, capacity: 3) { envp in
                        var saved = sigset_t()
                        mpin_block_signals(&saved)
                        // _Fork: no atfork handlers of the host; the child makes only
                        // async-signal-safe calls until exec (the host may have threads).
                        let pid = _Fork()
                        if pid == 0 { execHelper(socket: pair.1, executable: executable, argv: argv, envp: envp) }
                        let failure = mpin_errno()
                        mpin_restore_signals(&saved)
                        return (pid, failure)
                    }
                }
            }
        }
        close(pair.1)
        guard child.0 > 0 else {
            close(pair.0)
            logError(pamh, "cannot run ", path, errno: child.1)
            return false
        }
        pid = child.0
        fd = pair.0
        return true
    }

    /// Serves the helper's frames until its RESULT.
    mutating func relay(_ pamh: OpaquePointer) -> Outcome {
        while true {
            var header: (UInt8, UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0, 0)
            let size = Int(MPIN_PAM_HEADER_SIZE)
            if let failure = withUnsafeMutableBytes(of: &header, { readExactly($0.baseAddress!, size) }) {
                return .failed(failure)
            }
            heard = true
            guard let frame = withUnsafeBytes(of: &header, { FrameHeader(UnsafeRawBufferPointer(rebasing: $0[0..<size])) }) else {
                return .failed(.brokeProtocol)
            }
            // One byte more than the payload: a NUL after it, so that its text is a C string.
            guard let payload = malloc(frame.length + 1)?.assumingMemoryBound(to: UInt8.self) else {
                return .failed(.outOfMemory)
            }
            if let failure = readExactly(UnsafeMutableRawPointer(payload), frame.length) {
                explicit_bzero(payload, frame.length)
                free(payload)
                return .failed(failure)
            }
            payload[frame.length] = 0
            let request = HelperRequest(type: frame.type, payload: UnsafeRawBufferPointer(start: payload, count: frame.length))
            let outcome = serve(pamh, request, text: UnsafeRawPointer(payload + 1).assumingMemoryBound(to: CChar.self))
            explicit_bzero(payload, frame.length)
            free(payload)
            if let outcome { return outcome }
        }
    }

    /// Does what one frame asks; nil to go on.
    private mutating func serve(_ pamh: OpaquePointer, _ request: HelperRequest?, text: UnsafePointer<CChar>) -> Outcome? {
        guard let request else { return .failed(.brokeProtocol) }
        let asked = monotonicMilliseconds()
        switch request {
        case .converse(let style):
            var answer: UnsafeMutablePointer<CChar>? = nil
            // A missing or failing conversation is told apart from an empty answer: the helper
            // then ends at once instead of waiting for a PIN nobody can type
            // (pam_mpin(8), PAM RETURN CODES).
            let conversed = converse(pamh, style: style, text: text, answer: &answer) == PAM_SUCCESS
            if !conversed { answer = nil }
            // Waiting for the user does not count against the helper's budget.
            extendDeadline(since: asked)
            var sent = true
            if style == PAM_PROMPT_ECHO_OFF || style == PAM_PROMPT_ECHO_ON {
                sent = sendReply(answer, status: conversed ? nil : UInt8(MPIN_PAM_CONVERSATION_FAILED))
            }
            wipeAndFree(answer)
            return sent ? nil : .failed(.brokeProtocol)
        case .getItem(let item):
            var value: UnsafePointer<CChar>? = nil
            if item == PAM_USER {
                if pam_get_user(pamh, &value, nil) != PAM_SUCCESS { value = nil }
                extendDeadline(since: asked)
            } else {
                var raw: UnsafeRawPointer? = nil
                if pam_get_item(pamh, item, &raw) == PAM_SUCCESS { value = raw?.assumingMemoryBound(to: CChar.self) }
            }
            return sendReply(value) ? nil : .failed(.brokeProtocol)
        case .log(let priority):
            mpin_syslog(pamh, priority, text)
            return nil
        case .watchdog(let milliseconds):
            deadline = monotonicMilliseconds() &+ Int64(milliseconds)
            return nil
        case .result(let code):
            return .result(code)
        }
    }

    private mutating func extendDeadline(since asked: Int64) {
        let spent = monotonicMilliseconds() &- asked
        if spent > 0 { deadline = deadline &+ spent }
    }

    /// Reads exactly `count` bytes, waiting no later than the deadline; nil on success.
    private func readExactly(_ buffer: UnsafeMutableRawPointer, _ count: Int) -> Failure? {
        var got = 0
        while got < count {
            let left = deadline &- monotonicMilliseconds()
            if left <= 0 { return .timedOut }
            var watched = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&watched, 1, left > Int64(Int32.max) ? Int32.max : Int32(left))
            if ready < 0 && mpin_errno() != EINTR { return .pollFailed }
            if ready <= 0 { continue }
            let n = recv(fd, buffer + got, count - got, 0)
            if n < 0 {
                let e = mpin_errno()
                if e == EINTR || e == EAGAIN { continue }
                // ECONNRESET: it exited with our data unread.
                return e == ECONNRESET ? .ended : .readFailed
            }
            if n == 0 { return .ended }
            got += n
        }
        return nil
    }

    private func sendAll(_ data: UnsafeRawPointer, _ count: Int) -> Bool {
        var sent = 0
        while sent < count {
            let n = send(fd, data + sent, count - sent, Int32(MPIN_SEND_FLAGS))
            if n < 0 {
                if mpin_errno() == EINTR { continue }
                return false
            }
            sent += n
        }
        return true
    }

    /// The START frame of `start.length` bytes: the call, the flags, then the `start.count`
    /// arguments of argv, each with its NUL, sent from where they are.
    func sendStart(_ start: StartFrame) -> Bool {
        let bits = UInt32(bitPattern: start.flags)
        var prefix: (UInt8, UInt8, UInt8, UInt8, UInt8) = (start.call, UInt8(truncatingIfNeeded: bits >> 24),
            UInt8(truncatingIfNeeded: bits >> 16), UInt8(truncatingIfNeeded: bits >> 8), UInt8(truncatingIfNeeded: bits))
        guard sendHeader(UInt8(MPIN_PAM_FRAME_START), start.length),
              withUnsafeBytes(of: &prefix, { sendAll($0.baseAddress!, 1 + Int(MPIN_PAM_FLAGS_SIZE)) }) else { return false }
        for i in 0..<start.count {
            guard let argument = start.argv?[i] else { continue }
            guard sendAll(UnsafeRawPointer(argument), strlen(argument) + 1) else { return false }
        }
        return true
    }

    private func sendHeader(_ type: UInt8, _ length: Int) -> Bool {
        let count = UInt32(truncatingIfNeeded: length)
        var header: (UInt8, UInt8, UInt8, UInt8, UInt8) = (type, UInt8(truncatingIfNeeded: count >> 24),
            UInt8(truncatingIfNeeded: count >> 16), UInt8(truncatingIfNeeded: count >> 8), UInt8(truncatingIfNeeded: count))
        return withUnsafeBytes(of: &header) { sendAll($0.baseAddress!, Int(MPIN_PAM_HEADER_SIZE)) }
    }

    /// One frame: header, then the payload in two parts (a status byte and a text, either may
    /// be empty), so that a PIN is never copied into another buffer. The lengths are at most
    /// MPIN_PAM_MAX_PAYLOAD together (the callers' limit).
    func sendFrame(_ type: UInt8, _ first: UnsafeRawPointer?, _ firstCount: Int, _ text: UnsafeRawPointer?, _ textCount: Int) -> Bool {
        guard sendHeader(type, firstCount + textCount) else { return false }
        if firstCount > 0, let first, !sendAll(first, firstCount) { return false }
        if textCount > 0, let text, !sendAll(text, textCount) { return false }
        return true
    }

    /// REPLY with `text`; its status is ANSWERED or NO_ANSWER from `text`, unless `status`
    /// names another.
    private func sendReply(_ text: UnsafePointer<CChar>?, status given: UInt8? = nil) -> Bool {
        var status = given ?? UInt8(text != nil ? MPIN_PAM_ANSWERED : MPIN_PAM_NO_ANSWER)
        let count = text.map { strnlen($0, Int(MPIN_PAM_MAX_PAYLOAD) - 1) } ?? 0
        return withUnsafeBytes(of: &status) { sendFrame(UInt8(MPIN_PAM_FRAME_REPLY), $0.baseAddress, 1, text.map(UnsafeRawPointer.init), count) }
    }

    /// Waits for the helper (this pid only: the host's other children are the host's); one
    /// that has not sent its result, or does not exit soon after it, is killed. A helper
    /// someone else already reaped (ECHILD) is fine. Returns the wait status.
    func reap(finished sentResult: Bool) -> Int32 {
        var finished = false
        if sentResult {
            // Its end of the socket closes when it exits: wait for that end of file.
            let until = monotonicMilliseconds() &+ Int64(MPIN_EXIT_GRACE_MS)
            while true {
                let left = until &- monotonicMilliseconds()
                var watched = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let ready = left > 0 ? poll(&watched, 1, Int32(truncatingIfNeeded: left)) : 0
                if ready < 0 && mpin_errno() == EINTR { continue }
                if ready <= 0 { break }
                var byte: UInt8 = 0
                let n = recv(fd, &byte, 1, 0)
                if n < 0 && mpin_errno() == EINTR { continue }
                finished = n == 0
                break
            }
        }
        if !finished { kill(pid, SIGKILL) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if mpin_errno() != EINTR { return 0 }
        }
        return status
    }
}

/// In the child, between fork and exec: only async-signal-safe calls, no allocation.
func execHelper(socket: Int32, executable: Int32, argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>,
                envp: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Never {
    // Above 2 first, so that neither is overwritten by the dup2s below.
    let channel = mpin_dup_above(socket, 3)
    var file = mpin_dup_above(executable, 3)
    if channel < 0 || file < 0 { _exit(127) }
    if dup2(channel, 0) != 0 { _exit(127) }
    let null = mpin_openat(AT_FDCWD, cString("/dev/null"), Int32(MPIN_OPEN_NULL))
    if null < 0 { _exit(127) }
    if null != 1 && dup2(null, 1) != 1 { _exit(127) }
    if null != 2 && dup2(null, 2) != 2 { _exit(127) }
    // The executable as fd 3, still close-on-exec; no other descriptor of the host's.
    if file != 3 {
        if dup3(file, 3, Int32(MPIN_CLOSE_ON_EXEC)) != 3 { _exit(127) }
        file = 3
    }
    close_range(4, UInt32.max, 0)
    for signal in 1..<Int32(MPIN_SIGNALS) where signal != SIGKILL && signal != SIGSTOP {
        mpin_child_signal_default(signal)
    }
    mpin_child_unblock_signals()
    _ = mpin_execveat(file, argv, envp)
    // A script's interpreter reopens the file as /dev/fd/N, which close-on-exec would close:
    // the kernel says ENOENT before it commits to the exec. Once more with the file kept open.
    if mpin_errno() == ENOENT && mpin_keep_on_exec(file) == 0 {
        _ = mpin_execveat(file, argv, envp)
    }
    _exit(127)
}

// MARK: The conversation

/// One question through the application's conversation. On success `answer` is malloc'd (or
/// nil) and the caller wipes it.
func converse(_ pamh: OpaquePointer, style: Int32, text: UnsafePointer<CChar>, answer: inout UnsafeMutablePointer<CChar>?) -> Int32 {
    answer = nil
    var item: UnsafeRawPointer? = nil
    let found = pam_get_item(pamh, PAM_CONV, &item)
    guard found == PAM_SUCCESS else { return found }
    guard let conversation = item?.assumingMemoryBound(to: pam_conv.self).pointee, let function = conversation.conv else {
        return PAM_CONV_ERR
    }
    var message = pam_message(msg_style: style, msg: text)
    var response: UnsafeMutablePointer<pam_response>? = nil
    let rc = withUnsafePointer(to: &message) { one in
        var messages: UnsafePointer<pam_message>? = one
        return function(1, &messages, &response, conversation.appdata_ptr)
    }
    if let response {
        if rc == PAM_SUCCESS { answer = response.pointee.resp } else { wipeAndFree(response.pointee.resp) }
        free(response)
    }
    return rc
}

func wipeAndFree(_ secret: UnsafeMutablePointer<CChar>?) {
    guard let secret else { return }
    explicit_bzero(secret, strlen(secret))
    free(secret)
}

// MARK: Small things Embedded Swift has no library for

func monotonicMilliseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) &* 1000 &+ Int64(now.tv_nsec) / 1_000_000
}

func cString(_ s: StaticString) -> UnsafePointer<CChar> {
    UnsafeRawPointer(s.utf8Start).assumingMemoryBound(to: CChar.self)
}

/// For argv and envp, whose C type is not const; exec does not write them.
func mutableCString(_ s: StaticString) -> UnsafeMutablePointer<CChar> {
    UnsafeMutablePointer(mutating: cString(s))
}

func logError(_ pamh: OpaquePointer, _ what: StaticString, _ path: UnsafePointer<CChar>?, errno: Int32) {
    var line = LogLine(what)
    line.append(cString: path)
    line.append(": ")
    line.append(cString: strerror(errno))
    line.send(pamh, LOG_ERR)
}

/// A syslog line built in a fixed buffer (no String in this module); cut at 1023 bytes. If
/// the buffer cannot be allocated, nothing is logged.
struct LogLine {
    private let buffer: UnsafeMutablePointer<CChar>?
    private var used = 0
    private let capacity = 1024

    init() {
        buffer = malloc(1024)?.assumingMemoryBound(to: CChar.self)
        buffer?[0] = 0
    }

    init(_ text: StaticString) {
        self.init()
        append(text)
    }

    mutating func append(_ text: StaticString) {
        append(cString(text), count: text.utf8CodeUnitCount)
    }

    mutating func append(cString text: UnsafePointer<CChar>?) {
        guard let text else { return }
        append(text, count: strlen(text))
    }

    mutating func append(_ text: UnsafePointer<CChar>, count: Int) {
        guard let buffer else { return }
        let room = capacity - 1 - used
        let n = count < room ? count : room
        if n > 0 {
            memcpy(buffer + used, text, n)
            used += n
        }
        buffer[used] = 0
    }

    mutating func append(number: Int64) {
        var digits: (CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar,
                     CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar, CChar) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var value = number.magnitude
        withUnsafeMutableBytes(of: &digits) { raw in
            let out = raw.baseAddress!.assumingMemoryBound(to: CChar.self)
            var at = raw.count
            repeat {
                at -= 1
                out[at] = CChar(truncatingIfNeeded: 48 + value % 10)
                value /= 10
            } while value > 0 && at > 1
            if number < 0 {
                at -= 1
                out[at] = 45
            }
            append(out + at, count: raw.count - at)
        }
    }

    /// Logs the line and frees the buffer.
    func send(_ pamh: OpaquePointer, _ priority: Int32) {
        guard let buffer else { return }
        mpin_syslog(pamh, priority, buffer)
        free(buffer)
    }
}
