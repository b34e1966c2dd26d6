import Foundation
import MPinWire
import XCTest

/// The access number's QR code: decoded by an independent reader (zbarimg, from zbar-tools,
/// which `make test` installs), and the half-block text is the same matrix.
final class QRCodeTests: XCTestCase {
    func testReedSolomonOfAKnownMessage() {
        // ISO/IEC 18004 Annex I: "01234567" at 1-M; its 16 data codewords give these 10
        // error-correction codewords.
        let data: [UInt8] = [0x10, 0x20, 0x0C, 0x56, 0x61, 0x80, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11]
        XCTAssertEqual(QRCode.reedSolomon(data, degree: 10), [0xA5, 0x24, 0xD4, 0xC1, 0xED, 0x36, 0xC7, 0x87, 0x2C, 0x55])
    }

    func testRefusesWhatIsNotDigits() {
        XCTAssertNil(QRCode(digits: ""))
        XCTAssertNil(QRCode(digits: "12a4567"))
        XCTAssertNil(QRCode(digits: String(repeating: "1", count: 42)))
    }

    func testHalfBlocksDrawTheMatrix() throws {
        let code = try XCTUnwrap(QRCode(digits: "4241703"))
        let lines = code.halfBlocks(quiet: 2).split(separator: "\n").map { Array($0) }
        XCTAssertEqual(lines.count, (QRCode.size + 4 + 1) / 2)
        for r in 0..<QRCode.size {
            for c in 0..<QRCode.size {
                let ch = lines[(r + 2) / 2][c + 2]
                let light = (r + 2) % 2 == 0 ? (ch == "\u{2588}" || ch == "\u{2580}") : (ch == "\u{2588}" || ch == "\u{2584}")
                XCTAssertEqual(light, !code.dark[r][c], "module \(r),\(c)")
            }
        }
    }

    func testAnIndependentReaderDecodesIt() throws {
        guard let zbar = ["/usr/bin/zbarimg", "/usr/local/bin/zbarimg"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw XCTSkip("zbarimg is not installed (zbar-tools; make test installs it)")
        }
        for number in ["4241703", "1234567", "0000000", "9999999", "6419791"] {
            let code = try XCTUnwrap(QRCode(digits: number))
            // A PGM image: 8 pixels per module, a quiet zone of 4 modules.
            let scale = 8, quiet = 4, side = (QRCode.size + 2 * quiet) * scale
            var pixels = [UInt8](repeating: 255, count: side * side)
            for r in 0..<QRCode.size {
                for c in 0..<QRCode.size where code.dark[r][c] {
                    for y in 0..<scale { for x in 0..<scale { pixels[((r + quiet) * scale + y) * side + (c + quiet) * scale + x] = 0 } }
                }
            }
            let path = NSTemporaryDirectory() + "mpin-qr-\(number)-\(getpid()).pgm"
            defer { try? FileManager.default.removeItem(atPath: path) }
            try (Data("P5\n\(side) \(side)\n255\n".utf8) + Data(pixels)).write(to: URL(fileURLWithPath: path))
            let process = Process()
            process.executableURL = URL(fileURLWithPath: zbar)
            process.arguments = ["--quiet", "--raw", path]
            let out = Pipe()
            process.standardOutput = out
            try process.run()
            process.waitUntilExit()
            let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            XCTAssertEqual(text.trimmingCharacters(in: .whitespacesAndNewlines), number)
        }
    }

    /// The SVG (the web login page's) draws exactly the dark modules, offset by the quiet zone,
    /// and escapes its title.
    func testTheSVGDrawsTheDarkModules() throws {
        let code = try XCTUnwrap(QRCode(digits: "4241703"))
        let svg = code.svg(quiet: 4, title: "code <4241703> & \"x\"")
        XCTAssertTrue(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 29 29\""), svg)
        XCTAssertTrue(svg.contains("<title>code &lt;4241703&gt; &amp; &quot;x&quot;</title>"), svg)
        let d = try XCTUnwrap(svg.components(separatedBy: " d=\"").last?.components(separatedBy: "\"").first)
        var drawn = Set<[Int]>()
        for part in d.split(separator: "M") {
            let xy = part.components(separatedBy: "h").first!.split(separator: " ").compactMap { Int($0) }
            XCTAssertEqual(xy.count, 2, String(part))
            XCTAssertTrue(drawn.insert([xy[1] - 4, xy[0] - 4]).inserted, "a module drawn twice")
        }
        var expected = Set<[Int]>()
        for r in 0..<QRCode.size { for c in 0..<QRCode.size where code.dark[r][c] { expected.insert([r, c]) } }
        XCTAssertEqual(drawn, expected)
    }
}
