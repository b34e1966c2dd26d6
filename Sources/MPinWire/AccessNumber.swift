/// Access numbers with their check digit (docs/PROTOCOL.md §5.2).
package enum AccessNumber {
    /// The check digit `(11 − S mod 11) mod 11` of six digits, S = 7·d1 + 6·d2 + … + 2·d6.
    /// May be 10; servers never issue numbers whose check digit is 0 or 10.
    package static func checkDigit(_ sixDigits: [Int]) -> Int {
        precondition(sixDigits.count == 6)
        var s = 0
        for (i, d) in sixDigits.enumerated() { s += (7 - i) * d }
        return (11 - s % 11) % 11
    }

    /// A 7-digit number from a 6-digit body, or nil when its check digit would be 0 or 10.
    package static func issue(body: Int) -> String? {
        guard (0..<1_000_000).contains(body) else { return nil }
        let digits = Array(String(body).leftPadded(to: 6)).map { Int(String($0))! }
        let c = checkDigit(digits)
        guard c != 0, c != 10 else { return nil }
        return digits.map(String.init).joined() + String(c)
    }

    /// The server's strict check: exactly 7 ASCII digits, check digit in 1...9 and correct.
    package static func isValid(_ number: String) -> Bool {
        let utf8 = Array(number.utf8)
        guard utf8.count == 7, utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return false }
        let d = utf8.map { Int($0 - 48) }
        let c = checkDigit(Array(d[0..<6]))
        return c != 0 && c != 10 && d[6] == c
    }

    /// The SDK's `CheckAccessNumber` with checksum on: 7 digits and
    /// `c == ((11 − S mod 11) mod 11) mod 10` (so it also accepts 0 for a computed 10).
    package static func sdkAccepts(_ number: String) -> Bool {
        let utf8 = Array(number.utf8)
        guard utf8.count == 7, utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return false }
        let d = utf8.map { Int($0 - 48) }
        return d[6] == checkDigit(Array(d[0..<6])) % 10
    }
}

extension String {
    /// The string padded on the left to `width` characters (zeros by default).
    package func leftPadded(to width: Int, with pad: Character = "0") -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}
