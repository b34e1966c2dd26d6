// The Linux platform bundle handed to the client core (the SDK's IContext).

import MPinClient

/// HTTP through `LinuxHTTPTransport` (own sockets for plain HTTP to an IP address, libcurl for
/// the rest) and one private directory for both stores: secure values in files named
/// `secure-<name>`, non-secure ones in `state-<name>`, sharing the directory's write lock.
package struct LinuxPlatform: PlatformContext {
    package let transport: any HTTPTransport
    package let secureStorage: any SecureStorage
    package let nonSecureStorage: any Storage

    /// Creates the platform. `requiredOwner` is the uid the store's directory and files must
    /// belong to (root in production); `storeLockTimeout` bounds a write's wait for the store's
    /// lock (a login keeps it short so that a stuck writer cannot stretch its time budget).
    package init(storageDirectory: String = FileStorage.defaultDirectory, requiredOwner: UInt32 = 0,
                http: LinuxHTTPConfiguration = LinuxHTTPConfiguration(), storeLockTimeout: Duration = .seconds(10)) {
        transport = LinuxHTTPTransport(configuration: http)
        secureStorage = FileStorage(directory: storageDirectory,
                                    options: .init(requiredOwner: requiredOwner, filePrefix: "secure-",
                                                   lockTimeout: storeLockTimeout))
        nonSecureStorage = FileStorage(directory: storageDirectory,
                                       options: .init(requiredOwner: requiredOwner, filePrefix: "state-",
                                                      lockTimeout: storeLockTimeout))
    }
}
