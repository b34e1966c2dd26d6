// The resident helper: `mpin-pam-helper --serve`, started by systemd on the first connection to
// its socket (mpin-pam-helper.socket) and kept, so a login as root costs a connect and a fork
// instead of a process start. The module trusts it for what it is by the kernel's word, not by
// the socket's path: the process listening must be root's (SO_PEERCRED); a listener of any
// other user is an impostor, logged and never used. When nobody listens, the listener is not
// root, or the resident helper closes before its first frame (too many logins under way), the
// module runs the helper file itself, as it always did: the resident helper is a shortcut,
// never a requirement.
import CPAMModule

/// The resident helper's socket for this pam.d line: `helper_socket=PATH` (`none`: no resident
/// helper), else the installed one, unless the line names a helper file (helper=PATH) and no
/// socket: that helper is then the one run.
func residentSocketPath(argc: Int32, argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> UnsafePointer<CChar>? {
    var socketPath: UnsafePointer<CChar>? = nil
    var namesHelper = false
    let socketKey = cString("helper_socket=")
    let helperKey = cString("helper=")
    for i in 0..<(argc > 0 ? Int(argc) : 0) {
        guard let argument = argv?[i] else { continue }
        if strncmp(argument, socketKey, 14) == 0 { socketPath = argument + 14 }
        if strncmp(argument, helperKey, 7) == 0 { namesHelper = true }
    }
    if let socketPath { return strcmp(socketPath, cString("none")) == 0 ? nil : socketPath }
    return namesHelper ? nil : mpin_default_helper_socket()
}

/// The call through the resident helper at `path`: its PAM code, or nil when the module must
/// run the helper file instead (nobody listens, the listener is not root, or it closed the
/// connection before it sent anything, so it did nothing of the call).
func callResident(_ pamh: OpaquePointer, _ path: UnsafePointer<CChar>, _ start: StartFrame) -> Int32? {
    guard let fd = connectResident(pamh, path) else { return nil }
    var helper = Helper()
    helper.fd = fd
    helper.deadline = monotonicMilliseconds() &+ Int64(MPIN_PAM_FIRST_WATCHDOG_MS)
    var outcome: Outcome = .failed(.ended)
    if helper.sendStart(start) {
        outcome = helper.relay(pamh)
    }
    // No process of ours to reap: closing is all. A child still at work sees its end close.
    close(fd)
    switch outcome {
    case .result(let code):
        return code
    case .failed(let why):
        if why == .ended && !helper.heard { return nil }
        return reportFailure(pamh, path, why, status: 0)
    }
}

/// A connection to the listener at `path`, if it is root's. The connect does not wait: a Unix
/// socket's connect completes at once, or says EAGAIN when the listener's queue is full (then
/// the helper file is run).
private func connectResident(_ pamh: OpaquePointer, _ path: UnsafePointer<CChar>) -> Int32? {
    var address = sockaddr_un()
    let length = strlen(path)
    guard path[0] == 47, length < MemoryLayout.size(ofValue: address.sun_path) else {
        var line = LogLine("helper_socket=")
        line.append(cString: path)
        line.append(": not an absolute path of a Unix socket; the helper is run instead")
        line.send(pamh, LOG_ERR)
        return nil
    }
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { _ = memcpy($0.baseAddress!, path, length) }
    let fd = socket(AF_UNIX, Int32(MPIN_CONNECT_TYPE), 0)
    guard fd >= 0 else { return nil }
    let connected = mpin_connect_unix(fd, &address)
    guard connected == 0 else {
        let failure = mpin_errno()
        close(fd)
        // No resident helper (not installed, not started, stopped), a full queue, or a policy
        // that keeps this caller from the socket (SELinux without the resident helper's rules):
        // the helper file serves, as it always did; nothing to log on every login.
        if failure != ENOENT && failure != ECONNREFUSED && failure != EAGAIN && failure != EACCES {
            logError(pamh, "cannot connect to ", path, errno: failure)
        }
        return nil
    }
    let owner = mpin_peer_uid(fd)
    guard owner == 0 else {
        var line = LogLine()
        line.append(cString: path)
        line.append(": the listener is not root's (uid ")
        line.append(number: owner)
        line.append("): an impostor, not used; the helper is run instead")
        line.send(pamh, LOG_ERR)
        close(fd)
        return nil
    }
    guard mpin_set_blocking(fd) == 0 else {
        close(fd)
        return nil
    }
    return fd
}
