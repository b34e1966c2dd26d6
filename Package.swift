// swift-tools-version:6.0
import PackageDescription

// Layers, dependencies pointing one way:
//   MPinCrypto  <-  MPinWire  <-  (client core, PAM module, CLI: later issues)
//   MPinCrypto + MPinWire  <-  MPinServer  <-  mpin-server
let package = Package(
    name: "mpin-pam",
    products: [
        .library(name: "MPinCrypto", targets: ["MPinCrypto"]),
        .library(name: "MPinWire", targets: ["MPinWire"]),
        .library(name: "MPinServer", targets: ["MPinServer"]),
        .executable(name: "mpin-server", targets: ["mpin-server"]),
        .executable(name: "mpin-server-bench", targets: ["mpin-server-bench"]),
        .executable(name: "mpin-vectors", targets: ["mpin-vectors"]),
        .executable(name: "mpin-bench", targets: ["mpin-bench"]),
        .executable(name: "mpin-demo", targets: ["mpin-demo"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
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
        // Wire types of the Milagro MFA protocol, shared by the client and the server.
        .target(name: "MPinWire", dependencies: ["MPinCrypto"]),
        // The backend roles: RPS, two D-TAs, M-Pin authentication server, SQLite storage.
        .target(name: "MPinServer", dependencies: [
            "MPinCrypto", "MPinWire",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "GRDB", package: "GRDB.swift"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .executableTarget(name: "mpin-server", dependencies: [
            "MPinServer",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // `make bench`: authentications per second against a local release server.
        .executableTarget(name: "mpin-server-bench", dependencies: [
            "MPinServer", "MPinWire", "MPinCrypto", .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(name: "MPinWireTests", dependencies: ["MPinWire", "MPinCrypto"]),
        .testTarget(name: "MPinServerTests", dependencies: ["MPinServer", "MPinWire", "MPinCrypto"]),
        .testTarget(name: "MPinCryptoTests", dependencies: ["MPinCrypto", "MPinVectorCheck", "COpenSSL"]),
    ]
)
