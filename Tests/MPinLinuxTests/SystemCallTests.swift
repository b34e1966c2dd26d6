import Glibc
import MPinLinux
import XCTest

/// `retryingOnInterrupt`, the one EINTR loop of the Linux platform code.
final class SystemCallTests: XCTestCase {
    func testRetriesWhileInterruptedThenReturnsTheResult() throws {
        var calls = 0
        let result = try retryingOnInterrupt { () -> Int in
            calls += 1
            if calls < 3 {
                errno = EINTR
                return -1
            }
            return 42
        }
        XCTAssertEqual(result, 42)
        XCTAssertEqual(calls, 3)
    }

    func testOtherFailuresAreThrownWithTheirErrno() {
        var calls = 0
        XCTAssertThrowsError(try retryingOnInterrupt { () -> Int32 in
            calls += 1
            errno = calls == 1 ? EINTR : EAGAIN
            return -1
        }) { error in
            XCTAssertEqual(error as? SystemCallError, SystemCallError(code: EAGAIN))
        }
        XCTAssertEqual(calls, 2)
    }

    func testResultsOtherThanMinusOneAreNotFailures() throws {
        // 0 (end of file, or poll's timeout) is a result, whatever errno holds.
        errno = EINTR
        XCTAssertEqual(try retryingOnInterrupt { Int32(0) }, 0)
    }

    func testRealCallsThroughAPipe() throws {
        var fds: [Int32] = [-1, -1]
        XCTAssertEqual(pipe(&fds), 0)
        defer { close(fds[0]); close(fds[1]) }
        let message: [UInt8] = Array("hello".utf8)
        let written = try retryingOnInterrupt { message.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) } }
        XCTAssertEqual(written, message.count)
        var buffer = [UInt8](repeating: 0, count: 16)
        let count = try retryingOnInterrupt { buffer.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) } }
        XCTAssertEqual(Array(buffer[..<count]), message)
        // A bad descriptor is a failure with EBADF.
        XCTAssertThrowsError(try retryingOnInterrupt { read(-1, nil, 0) }) { error in
            XCTAssertEqual((error as? SystemCallError)?.code, EBADF)
        }
    }
}
