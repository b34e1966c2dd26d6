#if canImport(Glibc)
import Glibc
#endif

/// A point in time as seconds since 1970-01-01 UTC. MPinWire uses it instead of Foundation's
/// `Date` so that the client side (and so the PAM module) links without Foundation.
package struct WireTimestamp: Sendable, Hashable, Comparable {
    package var secondsSince1970: Double

    package init(secondsSince1970: Double) { self.secondsSince1970 = secondsSince1970 }

    /// The system's real-time clock.
    package static func now() -> WireTimestamp {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return WireTimestamp(secondsSince1970: Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9)
    }

    package static func < (a: WireTimestamp, b: WireTimestamp) -> Bool { a.secondsSince1970 < b.secondsSince1970 }

    package func adding(seconds: Double) -> WireTimestamp { WireTimestamp(secondsSince1970: secondsSince1970 + seconds) }
}

/// The protocol's four time formats (docs/PROTOCOL.md §2.3) and its day numbers (§2.2).
/// All in UTC, computed without locale-dependent formatters.
package enum WireTime {
    /// Days since 1970-01-01 UTC, the time-permit `date`.
    package static func day(_ date: WireTimestamp) -> Int32 {
        Int32((date.secondsSince1970 / 86_400).rounded(.down))
    }

    /// Milliseconds since the epoch (`localTimeStart`, OTP `expireTime`, …).
    package static func milliseconds(_ date: WireTimestamp) -> Int64 {
        Int64((date.secondsSince1970 * 1000).rounded(.down))
    }

    /// `YYYY-MM-DDTHH:MM:SSZ`: signature `expires`, auth-token `expires`.
    package static func signatureExpires(_ date: WireTimestamp) -> String {
        let c = Civil(date)
        return "\(c.dateString)T\(c.timeString)Z"
    }

    /// Parses `YYYY-MM-DDTHH:MM:SSZ` (also accepts a space for `T`); nil when malformed.
    package static func parseSignatureExpires(_ text: String) -> WireTimestamp? {
        let u = Array(text.utf8)
        guard u.count == 20, u[4] == 45, u[7] == 45, u[10] == 84 || u[10] == 32, u[13] == 58, u[16] == 58,
              u[19] == 90 else { return nil }
        func num(_ r: Range<Int>) -> Int? {
            var v = 0
            for i in r { guard u[i] >= 48, u[i] <= 57 else { return nil }; v = v * 10 + Int(u[i] - 48) }
            return v
        }
        guard let y = num(0..<4), let mo = num(5..<7), let d = num(8..<10), let h = num(11..<13),
              let mi = num(14..<16), let s = num(17..<19),
              (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, s < 61 else { return nil }
        let days = daysFromCivil(year: y, month: mo, day: d)
        return WireTimestamp(secondsSince1970: Double(days * 86_400 + h * 3600 + mi * 60 + s))
    }

    /// Python `isoformat()`: `2016-10-11T14:58:15.183359` (no zone; microseconds unless 0).
    /// The registration response's `expireTime` and `nowTime`.
    package static func pythonISO(_ date: WireTimestamp) -> String {
        let c = Civil(date)
        return "\(c.dateString)T\(c.timeString)\(c.microString)"
    }

    /// Python `str(datetime)`: `2016-10-11 13:58:16.831867`, the mpinId's `issued`.
    package static func pythonString(_ date: WireTimestamp) -> String {
        let c = Civil(date)
        return "\(c.dateString) \(c.timeString)\(c.microString)"
    }

    /// Days since the epoch of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    private struct Civil {
        var year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, micro = 0

        init(_ date: WireTimestamp) {
            let totalMicro = Int64((date.secondsSince1970 * 1_000_000).rounded())
            var secs = totalMicro / 1_000_000
            var us = totalMicro % 1_000_000
            if us < 0 { us += 1_000_000; secs -= 1 }
            micro = Int(us)
            var days = Int(secs / 86_400)
            var rem = Int(secs % 86_400)
            if rem < 0 { rem += 86_400; days -= 1 }
            hour = rem / 3600; minute = rem % 3600 / 60; second = rem % 60
            let z = days + 719_468
            let era = (z >= 0 ? z : z - 146_096) / 146_097
            let doe = z - era * 146_097
            let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
            let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
            let mp = (5 * doy + 2) / 153
            day = doy - (153 * mp + 2) / 5 + 1
            month = mp < 10 ? mp + 3 : mp - 9
            year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        }

        var dateString: String {
            "\(String(year).leftPadded(to: 4))-\(String(month).leftPadded(to: 2))-\(String(day).leftPadded(to: 2))"
        }
        var timeString: String {
            "\(String(hour).leftPadded(to: 2)):\(String(minute).leftPadded(to: 2)):\(String(second).leftPadded(to: 2))"
        }
        var microString: String { micro == 0 ? "" : "." + String(micro).leftPadded(to: 6) }
    }
}
