import MPinClient
import Synchronization

/// Storage in memory, for tests of the client core and the login without files. It counts
/// writes (a test can tell that a path wrote nothing) and can be told to fail, as a store on
/// a broken disk does.
package final class MemoryStorage: SecureStorage, Sendable {
    private struct State {
        var values: [String: [UInt8]] = [:]
        var writes = 0
        var failure: StorageError.Reason?
    }
    private let state = Mutex(State())

    package init() {}

    package func read(_ name: String) throws(StorageError) -> [UInt8]? {
        let (value, failure) = state.withLock { ($0.values[name], $0.failure) }
        if let failure { throw StorageError(path: name, reason: failure) }
        return value
    }

    package func write(_ name: String, _ value: [UInt8]) throws(StorageError) {
        let failure: StorageError.Reason? = state.withLock { s in
            guard s.failure == nil else { return s.failure }
            s.values[name] = value
            s.writes += 1
            return nil
        }
        if let failure { throw StorageError(path: name, reason: failure) }
    }

    package func delete(_ name: String) throws(StorageError) {
        let failure: StorageError.Reason? = state.withLock { s in
            guard s.failure == nil else { return s.failure }
            s.values.removeValue(forKey: name)
            return nil
        }
        if let failure { throw StorageError(path: name, reason: failure) }
    }

    /// From now on every operation throws a StorageError with `reason` (nil: work again).
    package func failEveryOperation(with reason: StorageError.Reason?) { state.withLock { $0.failure = reason } }

    /// Successful writes so far.
    package var writes: Int { state.withLock { $0.writes } }

    /// The value under `name` as UTF-8 text, "" when there is none.
    package func text(_ name: String) -> String {
        state.withLock { $0.values[name].map { String(decoding: $0, as: UTF8.self) } ?? "" }
    }

    /// The names holding a value.
    package var names: [String] { state.withLock { Array($0.values.keys) } }
}

/// A platform context assembled from test doubles (or from real parts wrapped by them).
package struct TestContext: PlatformContext {
    package let transport: any HTTPTransport
    package let secureStorage: any SecureStorage
    package let nonSecureStorage: any Storage

    package init(transport: any HTTPTransport, secureStorage: any SecureStorage, nonSecureStorage: any Storage) {
        self.transport = transport
        self.secureStorage = secureStorage
        self.nonSecureStorage = nonSecureStorage
    }
}
