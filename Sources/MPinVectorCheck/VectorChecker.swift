import Foundation
import MPinCrypto
import MPinWire

/// Recomputes Milagro-format M-Pin vector files (the two-pass and one-pass JSON layouts of
/// milagro-crypto-c's testVectors/mpin, and the DVS layout of docs/DVS.md) and reports every
/// field that differs.
package struct VectorChecker {
    /// One field of one vector that did not reproduce.
    package struct Mismatch: Sendable, CustomStringConvertible {
        package let vector: Int
        package let field: String
        package let expected: String
        package let got: String
        package var description: String { "vector \(vector): \(field): expected \(expected), got \(got)" }
    }

    package struct Report: Sendable {
        package var passed = 0
        package var failed = 0
        package var mismatches: [Mismatch] = []
    }

    package enum FileError: Error, CustomStringConvertible {
        case unreadable(String)
        case notAVectorList(String)
        package var description: String {
            switch self {
            case .unreadable(let p): "\(p): cannot read the file"
            case .notAVectorList(let p): "\(p): not a JSON list of M-Pin vectors"
            }
        }
    }

    package init() {}

    /// Checks every vector of a file.
    package func check(file path: String) throws -> Report {
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

    /// Recomputes one vector and returns the fields that differ. DVS vectors (they carry `PA`)
    /// go to `checkDVS`; the others are recomputed in the order docs/CRYPTO.md §10 gives.
    /// A vector with a field missing or malformed counts as a mismatch on that field.
    package func check(vector v: [String: String], number: Int) -> [Mismatch] {
        if v["PA"] != nil || v["MPIN_ID_PA_HEX"] != nil { return checkDVS(vector: v, number: number) }
        var out = VectorFields(values: v, number: number)
        func compare(_ field: String, _ got: [UInt8]?) { out.compare(field, got) }
        let bytes = out.bytes, int32 = out.int32

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
            out.mismatches.append(Mismatch(vector: number, field: "SERVER_OUTPUT", expected: expected, got: String(result.rawValue)))
        }
        return out.mismatches
    }
}

extension VectorChecker {
    /// Recomputes a DVS vector (docs/DVS.md, "Vector format") from its inputs alone (MS, Z,
    /// MPIN_ID_HEX, PIN1, PIN2, X, MESSAGE, VERIFY_MESSAGE, TIME_VALUE): every derived field
    /// is computed from recomputed values, never from the file's, and compared bit for bit.
    /// SERVER_E and SERVER_F (the failing pairing value and e(Pa, y·A + U), Milagro's PIN-error
    /// diagnostics) are compared when the vector has them; `*_PREIMAGE_HEX` must hash to the
    /// message it names.
    package func checkDVS(vector v: [String: String], number: Int) -> [Mismatch] {
        var out = VectorFields(values: v, number: number)
        func compare(_ field: String, _ got: [UInt8]?) { out.compare(field, got) }
        let bytes = out.bytes, int32 = out.int32

        // Inputs.
        let ms = bytes("MS"), z = bytes("Z"), mpinID = bytes("MPIN_ID_HEX"), x = bytes("X")
        let message = bytes("MESSAGE"), verifyMessage = bytes("VERIFY_MESSAGE")
        let timeValue = int32("TIME_VALUE")
        for (field, preimage) in [("MESSAGE", "MESSAGE_PREIMAGE_HEX"), ("VERIFY_MESSAGE", "VERIFY_MESSAGE_PREIMAGE_HEX")]
            where v[preimage] != nil {
            compare(field, MPin.hashID(bytes(preimage)))
        }

        // Key pair, signing identity, secrets and token.
        let serverSecret = try? MPin.serverSecret(masterSecret: ms)
        compare("SERVER_SECRET", serverSecret)
        let publicKey = try? DVS.publicKey(secretKey: z)
        compare("PA", publicKey?.bytes)
        let identity = publicKey.map { DVS.signingIdentity(mpinID: mpinID, publicKey: $0) }
        compare("MPIN_ID_PA_HEX", identity)
        let hashedID = identity.map { MPin.hashID($0) }
        compare("HASH_MPIN_ID_PA_HEX", hashedID)
        let hid = hashedID.flatMap { try? G1Point.map(hash: $0).encoded() }
        compare("HID", hid)
        let clientSecret = hashedID.flatMap { try? MPin.clientSecret(masterSecret: ms, hashedID: $0) }
        compare("CLIENT_SECRET", clientSecret)
        let keyed = clientSecret.flatMap { try? DVS.keyedClientSecret(clientSecret: $0, secretKey: z) }
        compare("CLIENT_SECRET_Z", keyed)
        let token = identity.flatMap { id in keyed.flatMap { try? DVS.extractToken(signingIdentity: id, pin: int32("PIN1"), keyedClientSecret: $0) } }
        compare("TOKEN", token)

        // Signing: pass 1 (SEC, U), the challenge, then V through the DVS API and through
        // MPIN_CLIENT_2 on the recomputed SEC, which must agree.
        let pass1 = identity.flatMap { id in token.flatMap {
            try? MPin.client1(date: 0, mpinID: id, x: x, pin: int32("PIN2"), token: $0, timePermit: nil)
        } }
        compare("SEC", pass1?.sec)
        compare("U", pass1?.u)
        let u = pass1?.u ?? []
        compare("Y_HASH_INPUT", timePrefix(timeValue) + u + message)
        let y = DVS.challenge(u: u, message: message, timeValue: timeValue)
        compare("Y", y)
        let signature = identity.flatMap { id in token.flatMap {
            try? DVS.sign(signingIdentity: id, x: x, pin: int32("PIN2"), token: $0, message: message, timeValue: timeValue)
        } }
        compare("V", signature?.v)
        compare("V", pass1.flatMap { try? MPin.client2(x: x, y: y, sec: $0.sec) })
        compare("U", signature?.u)

        // Verification of VERIFY_MESSAGE.
        compare("SERVER_Y_HASH_INPUT", timePrefix(timeValue) + u + verifyMessage)
        let serverY = DVS.challenge(u: u, message: verifyMessage, timeValue: timeValue)
        compare("SERVER_Y", serverY)
        let result = DVS.verify(signingIdentity: identity ?? [], publicKey: publicKey?.bytes ?? [],
                                serverSecret: serverSecret ?? [], u: u, v: signature?.v ?? [],
                                message: verifyMessage, timeValue: timeValue)
        let expected = v["SERVER_OUTPUT"] ?? "<missing>"
        if expected != String(result.rawValue) {
            out.mismatches.append(Mismatch(vector: number, field: "SERVER_OUTPUT", expected: expected, got: String(result.rawValue)))
        }
        if v["SERVER_E"] != nil || v["SERVER_F"] != nil {
            // E = e(Pa, V)·e(sQ, P) and F = e(Pa, P) with P = y'·HID + U (MPIN_SERVER_2's
            // diagnostics with Pa in place of Q).
            var e: [UInt8]?, f: [UInt8]?
            if let pa = publicKey, let ss = serverSecret.flatMap({ try? G2Point(bytes: $0) }),
               let a = hid.flatMap({ try? G1Point(bytes: $0) }), let uPoint = try? G1Point(bytes: u),
               let vPoint = signature.flatMap({ try? G1Point(bytes: $0.v) }), let ys = UInt256(bigEndian: serverY) {
                let p = a.multiplied(by: ys) + uPoint
                e = Pairing.doublePairing(pa.point, vPoint, ss, p).bytes
                f = Pairing.pairing(pa.point, p).bytes
            }
            compare("SERVER_E", e)
            compare("SERVER_F", f)
        }
        return out.mismatches
    }

    /// be32(T) when T > 0, else nothing (Milagro's `mhashit` prefix rule).
    private func timePrefix(_ t: Int32) -> [UInt8] {
        guard t > 0 else { return [] }
        let u = UInt32(t)
        return [UInt8(u >> 24), UInt8(truncatingIfNeeded: u >> 16), UInt8(truncatingIfNeeded: u >> 8), UInt8(truncatingIfNeeded: u)]
    }
}

/// One vector's fields as the checks read them, and the mismatches found so far.
struct VectorFields {
    let values: [String: String]
    let number: Int
    var mismatches: [VectorChecker.Mismatch] = []

    init(values: [String: String], number: Int) { self.values = values; self.number = number }

    /// Records a mismatch unless `got` is the field's value (lower-case hex; a failed
    /// computation never matches).
    mutating func compare(_ field: String, _ got: [UInt8]?) {
        let expected = (values[field] ?? "<missing>").lowercased()
        let gotHex = got.map(hexString) ?? "<error>"
        if expected != gotHex { mismatches.append(VectorChecker.Mismatch(vector: number, field: field, expected: expected, got: gotHex)) }
    }

    /// A hex field's bytes; empty when missing or malformed (the comparison then fails).
    func bytes(_ field: String) -> [UInt8] { values[field].flatMap(hexBytes) ?? [] }
    /// An integer field; 0 when missing or malformed.
    func int32(_ field: String) -> Int32 { Int32(values[field] ?? "") ?? 0 }
}

/// Lower-case hex of bytes (MPinWire's codec, re-exported for the tests and the checker).
package func hexString(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }

/// Bytes of an even-length hex string, or nil.
package func hexBytes(_ text: String) -> [UInt8]? { Hex.decode(text) }
