// Test helper: writes self-checking values to one FileStorage name, as fast as it can.
//   mpin-storage-stress DIRECTORY NAME WRITER_ID COUNT SIZE
// COUNT 0 means until killed. The values are MPinTestSupport's stressValue(writer:iteration:size:),
// so a reader can tell a whole value from a torn one.
// The store's required owner is this process's effective uid. Exit 1 on a storage error.

#if canImport(Glibc)
import Glibc
#endif
import MPinLinux
import MPinTestSupport

/// Writes a line to standard error.
func complain(_ message: String) {
    let bytes = Array((message + "\n").utf8)
    _ = bytes.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
}

let arguments = CommandLine.arguments
guard arguments.count == 6, let writer = Int(arguments[3]), let count = Int(arguments[4]),
      let size = Int(arguments[5]) else {
    complain("usage: mpin-storage-stress DIRECTORY NAME WRITER_ID COUNT SIZE")
    exit(2)
}
let store = FileStorage(directory: arguments[1],
                        options: .init(requiredOwner: geteuid(), maxValueBytes: max(size, 1 << 20)))
var iteration = 0
while count == 0 || iteration < count {
    do {
        try store.write(arguments[2], stressValue(writer: writer, iteration: iteration, size: size))
    } catch {
        complain("mpin-storage-stress: \(error)")
        exit(1)
    }
    iteration += 1
}
