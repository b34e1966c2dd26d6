// Whole reads and writes over a descriptor. read, write, send and recv may move fewer bytes
// than asked (a pipe, a socket, a signal arriving mid-call), so every caller that needs all of
// a buffer loops; the loop lives here once, with SystemCall's EINTR rule.

#if canImport(Glibc)
import Glibc
#endif

/// Writes all of `bytes` to `fd`, repeating short writes and interrupted calls. A failed write
/// throws its errno; a write that moves nothing throws EIO, so the loop always ends.
package func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(SystemCallError) {
    try transferAll(bytes.count) { (done: Int) throws(SystemCallError) -> Int in
        try retryingOnInterrupt { bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, $0.count - done) } }
    }
}

/// `writeAll` through send(2) with `flags`: MSG_NOSIGNAL for a socket whose peer may be gone,
/// where write(2) would raise SIGPIPE.
package func sendAll(_ fd: Int32, _ bytes: [UInt8], flags: Int32) throws(SystemCallError) {
    try transferAll(bytes.count) { (done: Int) throws(SystemCallError) -> Int in
        try retryingOnInterrupt { bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + done, $0.count - done, flags) } }
    }
}

/// Reads from `fd` into `buffer` until it is full or the file ends, repeating short and
/// interrupted reads; returns how many bytes it holds. A failed read throws its errno.
package func readFully(_ fd: Int32, into buffer: inout [UInt8]) throws(SystemCallError) -> Int {
    var done = 0
    while done < buffer.count {
        let n = try retryingOnInterrupt { buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + done, $0.count - done) } }
        if n == 0 { break }
        done += n
    }
    return done
}

/// Reads exactly `buffer.count` bytes from `fd`; false when the file (or the peer's side of a
/// socket) ends first.
package func readExactly(_ fd: Int32, into buffer: inout [UInt8]) throws(SystemCallError) -> Bool {
    try readFully(fd, into: &buffer) == buffer.count
}

/// Calls `step` with the count moved so far until `count` bytes have moved.
private func transferAll(_ count: Int, _ step: (Int) throws(SystemCallError) -> Int) throws(SystemCallError) {
    var done = 0
    while done < count {
        let n = try step(done)
        guard n > 0 else { throw SystemCallError(code: EIO) }
        done += n
    }
}
