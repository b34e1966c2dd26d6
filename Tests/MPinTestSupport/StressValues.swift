// The values mpin-storage-stress writes and the storage tests check: value `iteration` of
// writer `writer` is `w<writer> i<iteration> ` followed by pseudo-random bytes seeded from
// both, `size` bytes in all, so that a reader can tell a whole value from a torn or foreign one.

/// The value writer `writer` stores at `iteration`.
package func stressValue(writer: Int, iteration: Int, size: Int) -> [UInt8] {
    var value = Array("w\(writer) i\(iteration) ".utf8)
    var state = UInt32(truncatingIfNeeded: writer &* 7919 &+ iteration &* 104_729 &+ 1)
    while value.count < size {
        state = state &* 1_664_525 &+ 1_013_904_223
        value.append(UInt8(truncatingIfNeeded: state >> 24))
    }
    return value
}

/// The (writer, iteration) of a whole stress value, or nil if `value` is torn or foreign.
package func decodeStressValue(_ value: [UInt8], size: Int) -> (writer: Int, iteration: Int)? {
    guard value.count == size else { return nil }
    let words = value.prefix(40).split(separator: UInt8(ascii: " "), maxSplits: 2)
    guard words.count >= 2, words[0].first == UInt8(ascii: "w"), words[1].first == UInt8(ascii: "i"),
          let writer = Int(String(decoding: words[0].dropFirst(), as: UTF8.self)),
          let iteration = Int(String(decoding: words[1].dropFirst(), as: UTF8.self)) else { return nil }
    return stressValue(writer: writer, iteration: iteration, size: size) == value ? (writer, iteration) : nil
}
