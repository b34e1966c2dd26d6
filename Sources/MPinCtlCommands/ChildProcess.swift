#if canImport(Glibc)
import Glibc
#endif
import MPinCLI

/// Runs a program and collects what it prints, without Foundation (mpinctl does without it):
/// posix_spawn with both outputs on pipes, read until they close or `timeout` seconds pass
/// (then the child is killed), and its exit status. For `mpinctl doctor`'s `sshd -T`.
enum ChildProcess {
    static func run(_ path: String, _ arguments: [String], timeout: Int32 = 10) -> (output: String, status: Int32, error: String) {
        var outPipe: [Int32] = [-1, -1], errPipe: [Int32] = [-1, -1]
        guard pipe(&outPipe) == 0 else { return ("", -1, "pipe failed") }
        guard pipe(&errPipe) == 0 else { close(outPipe[0]); close(outPipe[1]); return ("", -1, "pipe failed") }
        // Not inherited by the child (dup2 to 1 and 2 clears the flag on those copies).
        for fd in outPipe + errPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        let environment: [UnsafeMutablePointer<CChar>?] = [strdup("PATH=/usr/sbin:/usr/bin:/sbin:/bin"), strdup("LC_ALL=C"), nil]
        defer { for e in environment { free(e) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, environment)
        close(outPipe[1]); close(errPipe[1])
        defer { close(outPipe[0]); close(errPipe[0]) }
        guard spawned == 0 else { return ("", -1, "cannot run \(path): \(String(cString: strerror(spawned)))") }

        var collected: [[UInt8]] = [[], []]
        var fds = [pollfd(fd: outPipe[0], events: Int16(POLLIN), revents: 0), pollfd(fd: errPipe[0], events: Int16(POLLIN), revents: 0)]
        let deadline = System.monotonicSeconds() + Double(timeout)
        var timedOut = false
        var buffer = [UInt8](repeating: 0, count: 4096)
        while fds.contains(where: { $0.fd >= 0 }) {
            let left = deadline - System.monotonicSeconds()
            guard left > 0 else { timedOut = true; break }
            let ready = poll(&fds, nfds_t(fds.count), Int32(left * 1000) + 1)
            if ready < 0 { if errno == EINTR { continue }; break }
            for i in fds.indices where fds[i].fd >= 0 && fds[i].revents != 0 {
                let n = read(fds[i].fd, &buffer, buffer.count)
                if n > 0, collected[i].count < 1 << 20 { collected[i] += buffer[..<n] } else if n <= 0 && !(n < 0 && errno == EINTR) { fds[i].fd = -1 }
            }
        }
        if timedOut { kill(pid, SIGKILL) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exited = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        let error = timedOut ? "\(path) did not finish within \(timeout) s" : String(decoding: collected[1], as: UTF8.self)
        return (String(decoding: collected[0], as: UTF8.self), timedOut ? -1 : exited, error)
    }
}
