#if canImport(Glibc)
import Glibc
#endif
import MPinPOSIX

/// The few system services `mpinctl` and `mpin` need, on Glibc alone. They used Foundation for
/// these; statically linked, Foundation and ICU's data made each program about 60 MB
/// (docs/PERFORMANCE.md §2.6).
package enum System {
    /// The value of the environment variable `name`, if it is set.
    package static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// Whether `path` names anything (following symbolic links, as FileManager.fileExists did).
    package static func fileExists(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0
    }

    /// The names in directory `path`, without `.` and `..`, in no particular order; nil when it
    /// cannot be opened.
    package static func directoryEntries(_ path: String) -> [String]? {
        guard let dir = opendir(path) else { return nil }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    /// The bytes of the regular file `path`, at most `limit` of them; nil when it cannot be
    /// opened, is not a regular file, is larger than `limit`, or a read fails.
    package static func readFile(_ path: String, limit: Int = 64 << 20) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { return nil }
        var bytes: [UInt8] = []
        var block = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let got: Int
            do { got = try retryingOnInterrupt { block.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) } } } catch { return nil }
            if got == 0 { return bytes }
            guard bytes.count + got <= limit else { return nil }
            bytes += block[0..<got]
        }
    }

    /// Reads the file `path` block by block, handing each block to `body`; false when it cannot
    /// be opened or a read fails.
    package static func forEachBlock(ofFile path: String, _ body: (ArraySlice<UInt8>) -> Void) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var block = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let got: Int
            do { got = try retryingOnInterrupt { block.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) } } } catch { return false }
            if got == 0 { return true }
            body(block[0..<got])
        }
    }

    /// Creates the file `path`, which must not exist, with exactly `mode` (whatever the umask)
    /// and writes `bytes` to it; false on any failure, after which no file is left behind.
    package static func createFile(_ path: String, _ bytes: [UInt8], mode: mode_t) -> Bool {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { return false }
        let written = fchmod(fd, mode) == 0 && (try? writeAll(fd, bytes)) != nil
        guard close(fd) == 0, written else { unlink(path); return false }
        return true
    }

    /// Creates directory `path` and its missing parents with mode 0777 less the umask (as
    /// `mkdir -p`); existing directories are left as they are. Failures are not reported: the
    /// caller's next step on the directory says what is wrong.
    package static func createDirectories(_ path: String) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += (prefix.isEmpty || prefix.hasSuffix("/") ? "" : "/") + component
            _ = mkdir(prefix, 0o777)
        }
    }

    /// The directory part of `path` (everything before its last `/`), as NSString's
    /// deletingLastPathComponent gives it: `/a/b` -> `/a`, `/a` -> `/`, `a` -> ``.
    package static func parentDirectory(_ path: String) -> String {
        var p = Substring(path)
        while p.count > 1, p.hasSuffix("/") { p = p.dropLast() }
        guard let slash = p.lastIndex(of: "/") else { return "" }
        return slash == p.startIndex ? "/" : String(p[..<slash])
    }

    /// Seconds on a clock that no one sets (CLOCK_MONOTONIC), for deadlines.
    package static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// Seconds since 1970 (the wall clock).
    package static func unixTime() -> Int64 { Int64(time(nil)) }

    /// Sleeps `seconds`, going on sleeping after a signal interrupts it.
    package static func sleep(seconds: Double) {
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1e9))
        var remaining = timespec()
        while nanosleep(&request, &remaining) == -1, errno == EINTR { request = remaining }
    }

    /// An RFC 7231 date such as `Sun, 22 Nov 2026 07:00:00 GMT`, as seconds since 1970; nil for
    /// anything else. Names of days and months are English whatever the locale (parsed here,
    /// not by strptime).
    package static func httpDate(_ text: String) -> Int64? {
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
        let fields = text.split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 6, fields[0].count == 4, fields[0].hasSuffix(","), days.contains(String(fields[0].dropLast())),
              fields[1].count == 2, let day = Int(fields[1]), let month = months.firstIndex(of: String(fields[2])),
              fields[3].count == 4, let year = Int(fields[3]), fields[5] == "GMT" else { return nil }
        let clock = fields[4].split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 }),
              let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Int(clock[2]),
              (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second) else { return nil }
        var t = tm()
        t.tm_year = Int32(year - 1900)
        t.tm_mon = Int32(month)
        t.tm_mday = Int32(day)
        t.tm_hour = Int32(hour)
        t.tm_min = Int32(minute)
        t.tm_sec = Int32(second)
        let seconds = timegm(&t)
        // timegm normalises 31 Feb to 3 Mar: such a date is not a date.
        guard seconds != -1 || year == 1969, t.tm_mday == Int32(day), t.tm_mon == Int32(month) else { return nil }
        return Int64(seconds)
    }
}
