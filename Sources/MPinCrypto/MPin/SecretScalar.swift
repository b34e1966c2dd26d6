#if canImport(Glibc)
import Glibc
#endif

/// A secret scalar (a master secret, a DVS key, the client's x, a Schnorr nonce, a PIN factor)
/// kept in memory this value owns and wipes with explicit_bzero when it goes away, on every
/// path out of its scope, thrown errors included.
///
/// It replaces `defer { k = .zero }` on value-type locals: nothing reads k after that store, so
/// the optimiser may drop it as dead, and the secret stayed where it was; explicit_bzero cannot
/// be dropped. Not copyable, like `SecretBytes`, so no second copy outlives the wipe. Reading
/// `value` still copies the scalar into registers (and perhaps the stack) for the arithmetic,
/// which no Swift type can prevent; what this type guarantees is that its own copy is gone.
/// `Value` is a plain value without references (UInt256, Fr).
struct SecretScalar<Value>: ~Copyable {
    private let storage: UnsafeMutablePointer<Value>

    init(_ value: Value) {
        storage = .allocate(capacity: 1)
        storage.initialize(to: value)
    }

    /// The scalar, copied out for a computation.
    var value: Value { storage.pointee }

    /// Changes the scalar in its own storage (the old value is overwritten there, not copied
    /// to a new place that would need wiping too).
    func update(_ change: (inout Value) -> Void) { change(&storage.pointee) }

    deinit {
        storage.deinitialize(count: 1)
        explicit_bzero(storage, MemoryLayout<Value>.size)
        storage.deallocate()
    }
}
