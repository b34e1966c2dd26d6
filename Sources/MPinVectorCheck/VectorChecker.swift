import Foundation
import MPinCrypto
import MPinWire

/// Recomputes Milagro-format M-Pin vector files (the two-pass and one-pass JSON layouts of
/// milagro-crypto-c's testVectors/mpin) and reports every field that differs.
public struct VectorChecker {
    /// One field of one vector that did not reproduce.
    public struct Mismatch: Sendable, CustomStringConvertible {
        public let vector: Int
        public let field: String
        public let expected: String
        public let got: String
        public var description: String { "vector \(vector): \(field): expected \(expected), got \(got)" }
    }

    public struct Report: Sendable {
        public var passed = 0
        public var failed = 0
        public var mismatches: [Mismatch] = []
    }

    public enum FileError: Error, CustomStringConvertible {
        case unreadable(String)
        case notAVectorList(String)
        public var description: String {
            switch self {
            case .unreadable(let p): "\(p): cannot read the file"
            case .notAVectorList(let p): "\(p): not a JSON list of M-Pin vectors"
            }
        }
    }

    public init() {}

    /// Checks every vector of a file.
    public func check(file path: String) throws -> Report {
        guard let data = FileManager.default.contents(atPath: path) else { throw FileError.unreadable(path) }
        guard let list = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]] else {
            throw FileError.notAVectorList(path)
        }
        var report = Report()
        for (index, raw) in list.enumerated() {
            let fields = raw.mapValues { "\($0)" }
            let number = Int(fields["test_no"] ?? "") ?? index
            let mismatches = check(vector: fields, number: number)
            if mismatches.isEmpty { report.passed += 1 } else { report.failed += 1 }
            report.mismatches += mismatches
        }
        return report
    }

    /// Recomputes one vector in the order CRYPTO.md §10 gives and returns the fields that differ.
    /// A vector with a field missing or malformed counts as a mismatch on that field.
    public func check(vector v: [String: String], number: Int) -> [Mismatch] {
        var out = [Mismatch]()
        func compare(_ field: String, _ got: [UInt8]?) {
            let expected = (v[field] ?? "<missing>").lowercased()
            let gotHex = got.map(hexString) ?? "<error>"
            if expected != gotHex { out.append(Mismatch(vector: number, field: field, expected: expected, got: gotHex)) }
        }
        func bytes(_ field: String) -> [UInt8] { (v[field]).flatMap(hexBytes) ?? [] }
        func int32(_ field: String) -> Int32 { Int32(v[field] ?? "") ?? 0 }

        let mpinID = bytes("MPIN_ID_HEX")
        let date = int32("DATE")
        let hashedID = MPin.hashID(mpinID)
        compare("HASH_MPIN_ID_HEX", hashedID)

        compare("SS1", try? MPin.serverSecret(masterSecret: bytes("MS1")))
        compare("SS2", try? MPin.serverSecret(masterSecret: bytes("MS2")))
        compare("SERVER_SECRET", try? MPin.recombineG2(bytes("SS1"), bytes("SS2")))
        compare("CS1", try? MPin.clientSecret(masterSecret: bytes("MS1"), hashedID: hashedID))
        compare("CS2", try? MPin.clientSecret(masterSecret: bytes("MS2"), hashedID: hashedID))
        compare("CLIENT_SECRET", try? MPin.recombineG1(bytes("CS1"), bytes("CS2")))
        compare("TP1", try? MPin.timePermit(date: date, masterSecret: bytes("MS1"), hashedID: hashedID))
        compare("TP2", try? MPin.timePermit(date: date, masterSecret: bytes("MS2"), hashedID: hashedID))
        compare("TIME_PERMIT", try? MPin.recombineG1(bytes("TP1"), bytes("TP2")))
        compare("TOKEN", try? MPin.extractPIN(mpinID: mpinID, pin: int32("PIN1"), clientSecret: bytes("CLIENT_SECRET")))

        let pass1 = try? MPin.client1(date: date, mpinID: mpinID, x: bytes("X"), pin: int32("PIN2"),
                                      token: bytes("TOKEN"), timePermit: bytes("TIME_PERMIT"))
        compare("U", pass1?.u)
        compare("UT", pass1?.ut)

        let onePass = v["TimeValue"] != nil
        if onePass {
            // One-pass: Y = challenge(TimeValue, UT) and the file's SEC holds the final V.
            let y = MPin.challenge(timeValue: int32("TimeValue"), message: pass1?.ut ?? [])
            compare("Y", y)
            compare("SEC", pass1.flatMap { try? MPin.client2(x: bytes("X"), y: y, sec: $0.sec) })
        } else {
            compare("SEC", pass1?.sec)
            compare("V", try? MPin.client2(x: bytes("X"), y: bytes("Y"), sec: bytes("SEC")))
        }

        let server = try? MPin.server1(date: date, mpinID: mpinID)
        let result = MPin.server2(date: date, hid: server?.hid ?? [], htid: server?.htid, y: bytes("Y"),
                                  serverSecret: bytes("SERVER_SECRET"), u: bytes("U"), ut: bytes("UT"),
                                  v: bytes(onePass ? "SEC" : "V"))
        let expected = v["SERVER_OUTPUT"] ?? "<missing>"
        if expected != String(result.rawValue) {
            out.append(Mismatch(vector: number, field: "SERVER_OUTPUT", expected: expected, got: String(result.rawValue)))
        }
        return out
    }
}

/// Lower-case hex of bytes (MPinWire's codec, re-exported for the tests and the checker).
public func hexString(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }

/// Bytes of an even-length hex string, or nil.
public func hexBytes(_ text: String) -> [UInt8]? { Hex.decode(text) }
