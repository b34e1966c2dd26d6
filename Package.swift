// swift-tools-version:6.0
import PackageDescription

// Layers, dependencies pointing one way:
//   MPinCrypto  <-  MPinClient (platform protocols; client core later)  <-  MPinLinux (libcurl,
//   files)  <-  (wire types, server, PAM module, CLI: later issues)
let package = Package(
    name: "mpin-pam",
    products: [
        .library(name: "MPinCrypto", targets: ["MPinCrypto"]),
        .executable(name: "mpin-vectors", targets: ["mpin-vectors"]),
        .executable(name: "mpin-bench", targets: ["mpin-bench"]),
        .executable(name: "mpin-demo", targets: ["mpin-demo"]),
        .library(name: "MPinClient", targets: ["MPinClient"]),
        .library(name: "MPinLinux", targets: ["MPinLinux"]),
        .executable(name: "mpin-storage-stress", targets: ["mpin-storage-stress"]),
    ],
    targets: [
        // BN254CX field, curve and pairing arithmetic and the M-Pin primitives. Pure Swift.
        .target(name: "MPinCrypto"),
        // Recomputes Milagro-format M-Pin vector files.
        .target(name: "MPinVectorCheck", dependencies: ["MPinCrypto"]),
        .executableTarget(name: "mpin-vectors", dependencies: ["MPinVectorCheck"]),
        // `make bench`: one line per operation, `NAME MICROSECONDS`.
        .executableTarget(name: "mpin-bench", dependencies: ["MPinCrypto"]),
        // `make demo`: the protocol end to end in one process.
        .executableTarget(name: "mpin-demo", dependencies: ["MPinCrypto"]),
        // OpenSSL's libcrypto, used only by tests as an independent reference.
        .systemLibrary(name: "COpenSSL", path: "Sources/COpenSSL", pkgConfig: "libcrypto",
                       providers: [.apt(["libssl-dev"])]),
        .testTarget(name: "MPinCryptoTests", dependencies: ["MPinCrypto", "MPinVectorCheck", "COpenSSL"]),
        // The client's view of the platform: HTTP and storage protocols (the SDK's IHttpRequest,
        // IStorage, IContext). The client core joins it later.
        .target(name: "MPinClient", dependencies: ["MPinCrypto"]),
        // libcurl, and non-variadic wrappers for the calls Swift cannot make directly.
        .systemLibrary(name: "CCurl", path: "Sources/CCurl", pkgConfig: "libcurl",
                       providers: [.apt(["libcurl4-openssl-dev"])]),
        .target(name: "CCurlShim", dependencies: ["CCurl"]),
        // Linux implementations of the platform protocols: libcurl transport, root-owned file store.
        .target(name: "MPinLinux", dependencies: ["MPinClient", "CCurl", "CCurlShim"]),
        // Test helper: one process hammering a FileStorage (concurrency and kill tests).
        .executableTarget(name: "mpin-storage-stress", dependencies: ["MPinLinux"]),
        .testTarget(name: "MPinLinuxTests", dependencies: ["MPinLinux", "MPinClient", "mpin-storage-stress"]),
    ]
)
