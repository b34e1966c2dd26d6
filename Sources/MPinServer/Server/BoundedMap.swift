import Synchronization

/// A thread-safe dictionary for caches of public, recomputable values: emptied when it reaches
/// its capacity, so memory stays bounded whatever the traffic.
final class BoundedMap<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let entries = Mutex([Key: Value]())
    private let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    subscript(key: Key) -> Value? { entries.withLock { $0[key] } }

    func insert(_ value: Value, for key: Key) {
        entries.withLock { e in
            if e.count >= capacity { e.removeAll(keepingCapacity: true) }
            e[key] = value
        }
    }
}
