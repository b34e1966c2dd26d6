#if canImport(Glibc)
import Glibc
#endif
import MPinLinux

/// Reading a PIN without echo, or one line of standard input.
package enum Terminal {
    /// The longest PIN line kept; the rest of a longer line is read and dropped.
    package static let maxPINBytes = 256

    /// Reads one line from /dev/tty with echo off, restoring the terminal afterwards.
    package static func readSecret(_ prompt: String) throws -> [UInt8] {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw CLIError(status: .failed, message: "PIN_INPUT_CANCELED: no terminal; use --pin-stdin") }
        defer { close(fd) }
        var saved = termios()
        tcgetattr(fd, &saved)
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(fd, TCSAFLUSH, &quiet)
        defer { tcsetattr(fd, TCSAFLUSH, &saved); _ = write(fd, "\n", 1) }
        _ = prompt.withCString { write(fd, $0, strlen($0)) }
        return readLine(fd: fd)
    }

    /// One line from `fd` as bytes, without the newline (and a trailing CR), at most
    /// `maxPINBytes` of it (the rest of the line is read and dropped). Reads a byte at a time so
    /// that nothing after the line is consumed; the buffer never grows, so no copy of the PIN
    /// is left in freed memory. A signal arriving while it waits (SIGWINCH when the terminal is
    /// resized, SIGCHLD) does not end the line: the read is repeated. End of input or a read
    /// error ends it.
    package static func readLine(fd: Int32) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(maxPINBytes)
        var byte: UInt8 = 0
        while (try? retryingOnInterrupt({ read(fd, &byte, 1) })) == 1, byte != 10 {
            if out.count < maxPINBytes { out.append(byte) }
        }
        if out.last == 13 { out.removeLast() }
        byte = 0
        return out
    }
}
