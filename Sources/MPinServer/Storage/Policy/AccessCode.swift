import Foundation

/// Access codes (docs/MFA.md §1): 32 lower-case hex characters. In the pass-2 record (`auth.wid`)
/// an access code is kept as `ac:` + its hash, so the record never holds the code itself
/// and cannot be taken for an access number.
enum AccessCode {
    static let storedPrefix = "ac:"

    /// Whether a `WID` is an access code rather than an access number (which is 7 digits).
    static func isAccessCode(_ wid: String) -> Bool {
        wid.utf8.count == 32 && wid.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }
}
