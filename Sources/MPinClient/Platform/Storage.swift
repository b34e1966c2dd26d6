// Named values the client core keeps between runs, the counterpart of the SDK's IStorage.
// The core keeps one JSON document per storage (docs/PROTOCOL.md §3.9); names let it keep more.

/// Why a storage operation failed. `path` names the file or directory concerned; nothing here
/// ever contains the stored value.
public struct StorageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The reason, specific enough for an administrator to fix the store.
    public enum Reason: Sendable, Equatable {
        /// The value name is empty, too long, or has characters other than `A-Za-z0-9._-`
        /// (or starts with a dot).
        case invalidName
        /// The storage directory does not exist.
        case directoryMissing
        /// The path is not a directory, or is a symbolic link.
        case notADirectory
        /// The file is not a regular file (a link, a directory, a device...).
        case notARegularFile
        /// Owned by `actual` where `expected` is required.
        case wrongOwner(expected: UInt32, actual: UInt32)
        /// Group or world permission bits are set (`mode` is the permission bits).
        case insecurePermissions(mode: UInt32)
        /// The stored value is larger than the store's limit.
        case valueTooLarge(limit: Int)
        /// Another process held the store's lock for longer than the lock timeout.
        case lockTimeout
        /// The device is full (ENOSPC/EDQUOT); the previous value is unchanged.
        case noSpace
        /// A system call failed with `errno`.
        case systemError(operation: String, errno: Int32)
    }

    /// The file or directory concerned.
    public let path: String
    /// What went wrong.
    public let reason: Reason

    /// Creates an error.
    public init(path: String, reason: Reason) {
        self.path = path
        self.reason = reason
    }

    /// The error for a person: the path and the reason.
    public var description: String {
        let why: String
        switch reason {
        case .invalidName: why = "invalid value name"
        case .directoryMissing: why = "directory does not exist"
        case .notADirectory: why = "not a directory (or a symbolic link)"
        case .notARegularFile: why = "not a regular file"
        case .wrongOwner(let expected, let actual): why = "owned by uid \(actual), must be owned by uid \(expected)"
        case .insecurePermissions(let mode):
            why = "mode \(String(mode, radix: 8)) allows group/world access, must be 0700 (directory) or 0600 (file)"
        case .valueTooLarge(let limit): why = "value larger than \(limit) bytes"
        case .lockTimeout: why = "timed out waiting for the storage lock"
        case .noSpace: why = "no space left on device, previous value kept"
        case .systemError(let operation, let errno): why = "\(operation) failed (errno \(errno))"
        }
        return "storage error at \(path): \(why)"
    }
}

/// Named byte values that survive the process (the SDK's non-secure `IStorage`: settings,
/// user states, cached time permits).
///
/// A write replaces the whole value atomically: a reader sees the old or the new value, never a
/// mix, even if the writer crashes. Implementations must be safe across threads and processes.
public protocol Storage: Sendable {
    /// The value stored under `name`, or `nil` if there is none. Never writes anything.
    func read(_ name: String) throws(StorageError) -> [UInt8]?
    /// Replaces the value under `name`. On failure the previous value is unchanged.
    func write(_ name: String, _ value: [UInt8]) throws(StorageError)
    /// Removes the value under `name`; removing a missing value succeeds.
    func delete(_ name: String) throws(StorageError)
}

/// A `Storage` whose values are secrets (M-Pin tokens, regOTT): the implementation guarantees
/// that no other local user can read them, and never puts values into errors or logs.
public protocol SecureStorage: Storage {}

extension Storage {
    /// The value under `name` decoded as UTF-8, or `nil` if there is none.
    public func readText(_ name: String) throws(StorageError) -> String? {
        guard let bytes = try read(name) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Replaces the value under `name` with the UTF-8 encoding of `text`.
    public func writeText(_ name: String, _ text: String) throws(StorageError) {
        try write(name, Array(text.utf8))
    }
}

/// The two stores of the SDK's `IStorage::Type`.
public enum StorageKind: Sendable {
    /// Tokens and regOTTs.
    case secure
    /// Everything else.
    case nonSecure
}

/// What the client core gets from the platform (the SDK's `IContext`): a transport and the two
/// stores.
public protocol PlatformContext: Sendable {
    /// Performs the core's HTTP requests.
    var transport: any HTTPTransport { get }
    /// Holds tokens and regOTTs.
    var secureStorage: any SecureStorage { get }
    /// Holds non-secret state.
    var nonSecureStorage: any Storage { get }
}

extension PlatformContext {
    /// The store of `kind`, as the SDK's `IContext::GetStorage(type)`.
    public func storage(_ kind: StorageKind) -> any Storage {
        switch kind {
        case .secure: return secureStorage
        case .nonSecure: return nonSecureStorage
        }
    }
}
