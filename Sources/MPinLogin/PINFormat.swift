import MPinCrypto

/// What a PIN looks like (docs/SECURITY.md §6.9). Milagro's client turns the PIN text into a
/// number by a string hash reduced modulo 10,000 (docs/CRYPTO.md §5.2): any text, however long,
/// is one of 10,000 PINs, and "correct horse battery staple" is as good as the 4 digits it maps
/// to. So a PIN is digits only, of a fixed length (`pin_length`, default 4): more than 4 digits
/// add no strength (there are still only 10,000 distinct PINs), which registration says.
package enum PINFormat {
    package static let defaultLength = 4
    package static let allowedLengths = 4...8
    /// How many distinct PINs there are, whatever their length.
    package static let distinctPINs = 10_000

    /// Whether `pin` is exactly `length` ASCII digits.
    package static func isValid(_ pin: borrowing SecretBytes, length: Int) -> Bool {
        pin.withUnsafeBytes { isValid($0, length: length) }
    }

    package static func isValid(_ bytes: UnsafeRawBufferPointer, length: Int) -> Bool {
        // Every byte is looked at whatever the answer, so the time taken says nothing about
        // where a non-digit is.
        var digits = 0
        for b in bytes { digits += (b >= 0x30 && b <= 0x39) ? 1 : 0 }
        return bytes.count == length && digits == length
    }

    /// What the registration prompts and refusals say the PIN must be.
    package static func rule(length: Int) -> String { "exactly \(length) digits" }

    /// The note registration shows when `pin_length` is above 4, and nil otherwise.
    package static func lengthNote(length: Int) -> String? {
        guard length > 4 else { return nil }
        return "note: M-Pin reduces every PIN to one of \(distinctPINs) values (docs/CRYPTO.md §5.2): "
            + "a \(length)-digit PIN is no harder to guess than a 4-digit one"
    }
}
