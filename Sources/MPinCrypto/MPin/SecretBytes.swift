#if canImport(Glibc)
import Glibc
#endif

/// The bytes of a secret: a PIN, a token, a client secret or its shares, a random scalar, a
/// DVS key. It owns its memory and wipes it (explicit_bzero, which the optimiser cannot
/// drop) when it goes away, so no call site has to remember to. It cannot be copied: a
/// second copy that outlived the wipe is exactly what this type exists to prevent. Code that
/// needs the bytes borrows them (`withUnsafeBytes`) or, for an API that takes an array, gets a
/// temporary array that is wiped when the closure returns (`withTemporaryArray`).
///
/// Comparison (`hasSameBytes`) is constant time in the contents; the length is not secret.
public struct SecretBytes: ~Copyable, @unchecked Sendable {
    private let storage: UnsafeMutableRawBufferPointer
    /// How many bytes the secret has.
    public let count: Int

    /// A secret copied from `bytes`. The caller's copy is the caller's to wipe; prefer
    /// `init(taking:)` for an array that held the secret first.
    public init(copying bytes: some Collection<UInt8>) {
        count = bytes.count
        // One byte at least, so that an empty secret still owns a valid allocation.
        storage = .allocate(byteCount: Swift.max(count, 1), alignment: 1)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        var i = 0
        for b in bytes { storage[i] = b; i += 1 }
    }

    /// Takes the secret out of `bytes`, which is wiped and left empty.
    public init(taking bytes: inout [UInt8]) {
        self.init(copying: bytes)
        bytes.wipe()
        bytes = []
    }

    /// An empty secret (no bytes): what a user holds before it has one.
    public init() { self.init(copying: EmptyCollection<UInt8>()) }

    deinit {
        explicit_bzero(storage.baseAddress!, storage.count)
        storage.deallocate()
    }

    public var isEmpty: Bool { count == 0 }

    /// The bytes, borrowed for the duration of `body`, which must not keep the pointer.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(rebasing: storage[0..<count]))
    }

    /// The bytes as an array for APIs that take one; the array is wiped when `body` returns,
    /// so `body` must not keep it.
    public func withTemporaryArray<R, E: Error>(_ body: ([UInt8]) throws(E) -> R) throws(E) -> R {
        var copy = [UInt8](UnsafeRawBufferPointer(rebasing: storage[0..<count]))
        defer { copy.wipe() }
        return try body(copy)
    }

    /// Whether both secrets hold the same bytes. Constant time for equal lengths: every byte
    /// is compared, with no early exit.
    public func hasSameBytes(as other: borrowing SecretBytes) -> Bool {
        guard count == other.count else { return false }
        var difference: UInt8 = 0
        for i in 0..<count { difference |= storage[i] ^ other.storage[i] }
        return difference == 0
    }
}
