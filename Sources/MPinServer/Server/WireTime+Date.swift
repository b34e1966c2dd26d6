import Foundation
import MPinWire

// MPinWire is Foundation-free (so the PAM module stays small); the server works with
// Foundation's Date, and these overloads bridge the two.

extension WireTimestamp {
    init(_ date: Date) { self.init(secondsSince1970: date.timeIntervalSince1970) }
    var date: Date { Date(timeIntervalSince1970: secondsSince1970) }
}

extension WireTime {
    static func day(_ date: Date) -> Int32 { day(WireTimestamp(date)) }
    static func milliseconds(_ date: Date) -> Int64 { milliseconds(WireTimestamp(date)) }
    static func signatureExpires(_ date: Date) -> String { signatureExpires(WireTimestamp(date)) }
    static func pythonISO(_ date: Date) -> String { pythonISO(WireTimestamp(date)) }
    static func parseSignatureExpiresDate(_ text: String) -> Date? { parseSignatureExpires(text)?.date }
    /// The first hour of a UTC day, when yesterday's time permits are still accepted (§4.7).
    static func isGraceHour(_ date: Date) -> Bool { Int(date.timeIntervalSince1970) % 86_400 < 3600 }
}

extension MPinIdentity {
    static func build(userID: String, mobile: Int, issued: Date, salt: [UInt8], scope: String? = nil) -> [UInt8] {
        build(userID: userID, mobile: mobile, issued: WireTimestamp(issued), salt: salt, scope: scope)
    }
}
