// swift-tools-version:6.0
import PackageDescription

// Layers, dependencies pointing one way:
//   MPinCrypto <- MPinWire, MPinJSON <- MPinClient (core + platform protocols)
//   <- MPinLinux (libcurl, files) <- (server, PAM module, CLI: later issues)
let package = Package(
    name: "mpin-pam",
    products: [
        .library(name: "MPinCrypto", targets: ["MPinCrypto"]),
        .library(name: "MPinJSON", targets: ["MPinJSON"]),
        .library(name: "MPinWire", targets: ["MPinWire"]),
        .library(name: "MPinClient", targets: ["MPinClient"]),
        .executable(name: "mpin-vectors", targets: ["mpin-vectors"]),
        .executable(name: "mpin-bench", targets: ["mpin-bench"]),
        .executable(name: "mpin-demo", targets: ["mpin-demo"]),
        .library(name: "MPinLinux", targets: ["MPinLinux"]),
        .executable(name: "mpin-storage-stress", targets: ["mpin-storage-stress"]),
        .executable(name: "mpin-fork-check", targets: ["mpin-fork-check"]),
    ],
    targets: [
        // BN254CX field, curve and pairing arithmetic and the M-Pin primitives. Pure Swift.
        .target(name: "MPinCrypto"),
        // Strict JSON and Codable without Foundation, so the PAM module links small and static.
        .target(name: "MPinJSON"),
        // Wire types of the Milagro MFA protocol, shared by the client and the server.
        .target(name: "MPinWire", dependencies: ["MPinCrypto"]),
        // The Milagro SDK Core in Swift: user states, registration, authentication, over
        // platform protocols for HTTP and storage (Platform/).
        .target(name: "MPinClient", dependencies: ["MPinCrypto", "MPinWire", "MPinJSON"]),
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
        .testTarget(name: "MPinJSONTests", dependencies: ["MPinJSON"]),
        .testTarget(name: "MPinWireTests", dependencies: ["MPinWire", "MPinCrypto"]),
        // libcurl, and non-variadic wrappers for the calls Swift cannot make directly.
        .systemLibrary(name: "CCurl", path: "Sources/CCurl", pkgConfig: "libcurl",
                       providers: [.apt(["libcurl4-openssl-dev"])]),
        .target(name: "CCurlShim", dependencies: ["CCurl"]),
        // Linux implementations of the platform protocols: libcurl transport, root-owned file store.
        .target(name: "MPinLinux", dependencies: ["MPinClient", "CCurl", "CCurlShim"]),
        // Test helper: one process hammering a FileStorage (concurrency and kill tests).
        .executableTarget(name: "mpin-storage-stress", dependencies: ["MPinLinux"]),
        // Test helper: the transport used before and after fork() (sshd forks its PAM children).
        .executableTarget(name: "mpin-fork-check", dependencies: ["MPinLinux"]),
        .testTarget(name: "MPinLinuxTests",
                    dependencies: ["MPinLinux", "MPinClient", "mpin-storage-stress", "mpin-fork-check"]),
    ]
)
