/// A QR code of an access number, drawn with Unicode half blocks for a terminal (mpin-pam-helper)
/// or as SVG for a web page (mpin-server's login page, docs/MFA.md §5.2): version 1
/// (21 × 21 modules), error-correction level L, numeric mode, mask pattern 0. Seven digits take
/// 38 of its 152 data bits. Written from ISO/IEC 18004 as Project Nayuki's "QR Code generator"
/// explains it (function patterns, the zigzag placement, the format bits and Reed–Solomon over
/// GF(256) with x^8 + x^4 + x^3 + x^2 + 1); only what version 1 needs is here.
package struct QRCode: Sendable, Equatable {
    package static let size = 21
    /// `dark[row][column]`.
    package private(set) var dark: [[Bool]]
    private var reserved: [[Bool]]

    /// The code of `digits` (1 to 41 ASCII digits, version 1-L's numeric capacity); nil otherwise.
    package init?(digits: String) {
        let d = Array(digits.utf8)
        guard !d.isEmpty, d.count <= 41, d.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        dark = Array(repeating: Array(repeating: false, count: Self.size), count: Self.size)
        reserved = dark
        drawFunctionPatterns()
        let data = Self.dataCodewords(d)
        placeCodewords(data + Self.reedSolomon(data, degree: 7))
        drawFormatBits()
    }

    // MARK: Data

    /// Mode 0001, a 10-bit count, digits in groups of three (10 bits), two (7) or one (4), the
    /// terminator, padding to the byte, then the pad bytes 0xEC 0x11 up to 19 codewords.
    static func dataCodewords(_ digits: [UInt8]) -> [UInt8] {
        var bits: [Bool] = []
        func append(_ value: Int, _ count: Int) { for i in stride(from: count - 1, through: 0, by: -1) { bits.append((value >> i) & 1 == 1) } }
        append(1, 4)
        append(digits.count, 10)
        var i = 0
        while i < digits.count {
            let n = min(3, digits.count - i)
            var value = 0
            for k in 0..<n { value = value * 10 + Int(digits[i + k] - 0x30) }
            append(value, [0, 4, 7, 10][n])
            i += n
        }
        let capacity = 19 * 8
        append(0, min(4, capacity - bits.count))
        while bits.count % 8 != 0 { bits.append(false) }
        var bytes: [UInt8] = []
        for b in stride(from: 0, to: bits.count, by: 8) {
            var byte: UInt8 = 0
            for k in 0..<8 where bits[b + k] { byte |= 0x80 >> UInt8(k) }
            bytes.append(byte)
        }
        var pad: UInt8 = 0xEC
        while bytes.count < 19 { bytes.append(pad); pad = pad == 0xEC ? 0x11 : 0xEC }
        return bytes
    }

    /// GF(256) multiplication modulo x^8 + x^4 + x^3 + x^2 + 1.
    static func multiply(_ x: UInt8, _ y: UInt8) -> UInt8 {
        var z: UInt16 = 0
        for i in stride(from: 7, through: 0, by: -1) {
            z = (z << 1) ^ ((z >> 7) * 0x11D)
            if (y >> UInt8(i)) & 1 == 1 { z ^= UInt16(x) }
        }
        return UInt8(z & 0xFF)
    }

    /// The `degree` error-correction codewords of `data`: the remainder of data·x^degree divided
    /// by the generator (x − α^0)…(x − α^(degree−1)).
    package static func reedSolomon(_ data: [UInt8], degree: Int) -> [UInt8] {
        var divisor = Array(repeating: UInt8(0), count: degree)
        divisor[degree - 1] = 1
        var root: UInt8 = 1
        for _ in 0..<degree {
            for j in 0..<degree {
                divisor[j] = multiply(divisor[j], root)
                if j + 1 < degree { divisor[j] ^= divisor[j + 1] }
            }
            root = multiply(root, 2)
        }
        var remainder = Array(repeating: UInt8(0), count: degree)
        for byte in data {
            let factor = byte ^ remainder.removeFirst()
            remainder.append(0)
            for i in 0..<degree { remainder[i] ^= multiply(divisor[i], factor) }
        }
        return remainder
    }

    // MARK: Modules

    private mutating func set(row: Int, column: Int, _ value: Bool) {
        dark[row][column] = value
        reserved[row][column] = true
    }

    /// Timing patterns, the three finder patterns with their separators, the format areas and
    /// the dark module.
    private mutating func drawFunctionPatterns() {
        let n = Self.size
        for i in 0..<n {
            set(row: 6, column: i, i % 2 == 0)
            set(row: i, column: 6, i % 2 == 0)
        }
        for (cr, cc) in [(3, 3), (3, n - 4), (n - 4, 3)] {
            for dr in -4...4 {
                for dc in -4...4 {
                    let r = cr + dr, c = cc + dc
                    guard (0..<n).contains(r), (0..<n).contains(c) else { continue }
                    let ring = max(abs(dr), abs(dc))
                    set(row: r, column: c, ring != 2 && ring != 4)
                }
            }
        }
        drawFormatBits(reserveOnly: true)
    }

    /// The data and error-correction codewords, bit by bit (most significant first), in the
    /// two-column zigzag from the bottom right, skipping the vertical timing column; mask 0
    /// ((row + column) even) inverts each data module it covers.
    private mutating func placeCodewords(_ codewords: [UInt8]) {
        let n = Self.size
        var index = 0
        var right = n - 1
        while right >= 1 {
            if right == 6 { right = 5 }
            for vertical in 0..<n {
                for j in 0..<2 {
                    let column = right - j
                    let upward = (right + 1) & 2 == 0
                    let row = upward ? n - 1 - vertical : vertical
                    guard !reserved[row][column] else { continue }
                    var bit = false
                    if index < codewords.count * 8 {
                        bit = (codewords[index >> 3] >> UInt8(7 - (index & 7))) & 1 == 1
                        index += 1
                    }
                    dark[row][column] = bit != ((row + column) % 2 == 0)
                }
            }
            right -= 2
        }
    }

    /// The 15 format bits (level L = 01, mask 000, BCH(15,5), XOR 0x5412), twice.
    private mutating func drawFormatBits(reserveOnly: Bool = false) {
        let data = 0b01_000
        var remainder = data
        for _ in 0..<10 { remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537) }
        let bits = reserveOnly ? 0 : ((data << 10) | remainder) ^ 0x5412
        func bit(_ i: Int) -> Bool { (bits >> i) & 1 == 1 }
        let n = Self.size
        for i in 0..<6 { set(row: i, column: 8, bit(i)) }
        set(row: 7, column: 8, bit(6))
        set(row: 8, column: 8, bit(7))
        set(row: 8, column: 7, bit(8))
        for i in 9..<15 { set(row: 8, column: 14 - i, bit(i)) }
        for i in 0..<8 { set(row: 8, column: n - 1 - i, bit(i)) }
        for i in 8..<15 { set(row: n - 15 + i, column: 8, bit(i)) }
        set(row: n - 8, column: 8, true)
    }

    // MARK: Drawing

    /// The code as text, two module rows per line, with a quiet zone of `quiet` modules. Light
    /// modules are drawn (full, upper and lower half blocks) and dark ones left blank, which
    /// shows the code dark on light on a terminal with light text on a dark background.
    package func halfBlocks(quiet: Int = 2) -> String {
        let n = Self.size
        func isLight(_ r: Int, _ c: Int) -> Bool {
            guard (0..<n).contains(r), (0..<n).contains(c) else { return true }
            return !dark[r][c]
        }
        var lines: [String] = []
        for r in stride(from: -quiet, to: n + quiet, by: 2) {
            var line = ""
            for c in -quiet..<(n + quiet) {
                switch (isLight(r, c), isLight(r + 1, c)) {
                case (true, true): line += "\u{2588}"
                case (true, false): line += "\u{2580}"
                case (false, true): line += "\u{2584}"
                case (false, false): line += " "
                }
            }
            lines.append(line)
        }
        var text = ""
        for (i, line) in lines.enumerated() { text += (i == 0 ? "" : "\n") + line }
        return text
    }

    /// The code as a standalone SVG image, dark modules as one path on a light background with
    /// a quiet zone of `quiet` modules (ISO/IEC 18004 asks for 4); the image scales to its
    /// box. `title` labels it for screen readers (XML-escaped here).
    package func svg(quiet: Int = 4, title: String) -> String {
        let n = Self.size, side = n + 2 * quiet
        var path = ""
        for r in 0..<n {
            for c in 0..<n where dark[r][c] { path += "M\(c + quiet) \(r + quiet)h1v1h-1z" }
        }
        var escaped = ""
        for ch in title.unicodeScalars {
            switch ch {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            default: escaped.unicodeScalars.append(ch)
            }
        }
        return "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(side) \(side)\" role=\"img\" "
            + "shape-rendering=\"crispEdges\"><title>\(escaped)</title>"
            + "<rect width=\"\(side)\" height=\"\(side)\" fill=\"#fff\"/><path fill=\"#000\" d=\"\(path)\"/></svg>"
    }
}
