// swift-tools-version:6.2
import Foundation
import PackageDescription

// Layers, dependencies pointing one way (A <- B: B depends on A):
//   MPinCrypto, MPinJSON  <-  MPinWire  <-  MPinClient (SDK core + platform protocols)
//   CProcessControl  <-  MPinPOSIX (EINTR-safe POSIX calls, process hardening)
//   MPinClient + MPinPOSIX + CCurl/CCurlShim  <-  MPinLinux (libcurl, root-owned files)
//   MPinClient + MPinPOSIX  <-  MPinLogin (mpin.conf, account map, the login; beside MPinLinux, not on it)
//   MPinLogin + MPinLinux + CPAMProtocol  <-  mpin-pam-helper, which pam_mpin.so (pam/Module,
//     Embedded Swift, built by the Makefile) runs for each call
//   MPinClient + MPinLinux + MPinPOSIX  <-  MPinCLI  <-  MPinCtlCommands, MPinUserCommands (+ MPinLogin)
//     <-  mpinctl (both; `mpin` by name), mpin (MPinUserCommands alone)
//   MPinCrypto + MPinJSON + MPinWire + MPinPOSIX  <-  MPinServer (SQLite or PostgreSQL)  <-  mpin-server
// Products are what ships: the four programs, and MPinClient, the Swift M-Pin SDK for Linux (the
// Milagro SDK Core API in its two flavours, MPinSDK and MPinMFA, with DVS, over platform
// protocols), whose API is the only `public` one: everything else any library declares for the
// other targets is `package`. The SDK's targets build with unsafeFlags (below), which SwiftPM
// accepts in a dependency from tools version 6.2 on. The tools (mpin-bench, mpin-server-bench,
// mpin-vectors, mpin-demo, test helpers) stay executable targets: `swift build --product NAME`
// builds them.
// The client side links without Foundation so that mpin-pam-helper stays small and starts fast.
// The modules linked into mpin-pam-helper do not import _StringProcessing (Swift's regex and
// string-algorithm module) implicitly: statically linked, it and its regex parser cost the
// module about a megabyte that sshd maps on every connection. Its few conveniences
// (`contains(_:)` on strings, `replacing`, `trimmingPrefix`) are written out where needed.
let moduleSettings: [SwiftSetting] = [.unsafeFlags(["-Xfrontend", "-disable-implicit-string-processing-module-import", "-Xfrontend", "-disable-implicit-concurrency-module-import"])]

// The static libswiftCore.a that mpin-pam-helper links ahead of the toolchain's: `make` builds it
// (pam/module-stdlib.py) and names it here; a plain `swift build` links the toolchain's own,
// which gives the same module, only about 0.9 MB larger.
let moduleStdlib: [String] = ProcessInfo.processInfo.environment["MPIN_MODULE_STDLIB"].map { [$0] } ?? []

let package = Package(
    name: "mpin-pam",
    products: [
        // The work of pam_mpin.so (pam/Module, Embedded Swift, built by the Makefile), in its own process.
        .executable(name: "mpin-pam-helper", targets: ["mpin-pam-helper"]),
        .executable(name: "mpinctl", targets: ["mpinctl"]),
        .executable(name: "mpin", targets: ["mpin"]),
        .executable(name: "mpin-server", targets: ["mpin-server"]),
        // The SDK: MPinSDK, MPinMFA, DVS, users and statuses, and the platform protocols an
        // application implements (HTTPTransport, Storage, SecureStorage, PlatformContext).
        .library(name: "MPinClient", targets: ["MPinClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        // ES256 ID tokens of the OpenID provider (docs/MFA.md §7).
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.1"),
        // mpin-server's own TLS (a reloadable TLS child channel for Hummingbird, on swift-nio-ssl)
        // and the self-signed certificates of `init --self-signed`.
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        // /metrics: swift-metrics with a Prometheus backend.
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // PostgreSQL storage for several mpin-server nodes (`init --database postgresql://…`).
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
    ],
    targets: [
        // MARK: Cryptography and wire format

        // BN254CX field, curve and pairing arithmetic and the M-Pin primitives, in Swift.
        .target(name: "MPinCrypto", dependencies: ["CValueBarrier"], swiftSettings: moduleSettings),
        // The value barrier MPinCrypto passes its constant-time masks through (one empty asm
        // statement, so the optimiser cannot turn a mask back into a branch). Header only.
        .systemLibrary(name: "CValueBarrier", path: "Sources/CValueBarrier"),
        // Strict JSON and Codable without Foundation.
        .target(name: "MPinJSON", swiftSettings: moduleSettings),
        // Wire types of the Milagro MFA protocol, shared by the client and the server.
        .target(name: "MPinWire", dependencies: ["MPinCrypto", "MPinJSON"], swiftSettings: moduleSettings),

        // MARK: Client side

        // The Milagro SDK Core in Swift: user states, registration, authentication, over
        // platform protocols for HTTP and storage (Platform/).
        .target(name: "MPinClient", dependencies: ["MPinCrypto", "MPinWire", "MPinJSON"], swiftSettings: moduleSettings),
        // libcurl's header (CCurl), and libcurl itself loaded on first use through the shim.
        .systemLibrary(name: "CCurl", path: "Sources/CCurl",
                       providers: [.apt(["libcurl4-openssl-dev"])]),
        .target(name: "CCurlShim", dependencies: ["CCurl"]),
        // OpenSSL's libssl for PlainHTTPTransport's https, loaded on first use (dlopen of
        // libssl.so.3; only OpenSSL's headers at build time, from libssl-dev).
        .target(name: "CTLSShim"),
        // The host's TPM 2.0 for offline logins (docs/SECURITY.md, "Offline logins"): tpm2-tss's
        // ESYS and TCTI loader loaded on first use (dlopen), and only when offline logins are on;
        // only tpm2-tss's headers at build time (libtss2-dev).
        .target(name: "CTPMShim"),
        // POSIX calls retried on EINTR, for every module that makes blocking system calls, and the
        // process hardening of the programs that hold secrets (prctl, through CProcessControl's header).
        .systemLibrary(name: "CProcessControl", path: "Sources/CProcessControl"),
        .target(name: "MPinPOSIX", dependencies: ["CProcessControl"], swiftSettings: moduleSettings),
        // Linux implementations of the platform protocols: own HTTP/1.1 (plain or OpenSSL TLS) and
        // libcurl transports, root-owned file store.
        .target(name: "MPinLinux", dependencies: ["MPinClient", "MPinPOSIX", "CCurl", "CCurlShim", "CTLSShim"], swiftSettings: moduleSettings),
        // What the PAM module and mpinctl share: mpin.conf, module options, the Unix user ->
        // identity map, and the login procedure with its time budget.
        .target(name: "MPinLogin", dependencies: ["MPinClient", "MPinCrypto", "MPinJSON", "MPinWire", "MPinPOSIX", "CTPMShim"], swiftSettings: moduleSettings),
        // The frames pam_mpin.so and mpin-pam-helper exchange, and PAM's constants (headers only).
        .systemLibrary(name: "CPAMProtocol", path: "Sources/CPAMProtocol"),
        // One pam_mpin.so call (pam/Module runs it, as pam_unix runs unix_chkpwd), so that
        // sshd and sudo map an 18 KB module instead of a static Swift runtime. Linked small
        // all the same (it is started on every login): the Swift runtime statically (nothing
        // to resolve at start), lld with packed relative relocations (DT_RELR, glibc 2.36) and,
        // under make, the libswiftCore.a copy whose unused functions --gc-sections may drop
        // (pam/module-stdlib.py, passed as MPIN_MODULE_STDLIB).
        .executableTarget(name: "mpin-pam-helper", dependencies: ["CPAMProtocol", "CProcessControl", "CTLSShim", "MPinClient", "MPinCrypto", "MPinLogin", "MPinLinux", "MPinPOSIX", "MPinWire"],
                          swiftSettings: moduleSettings,
                          linkerSettings: [.unsafeFlags(moduleStdlib + ["-static-stdlib", "-use-ld=lld", "-Xlinker", "--gc-sections", "-Xlinker", "--icf=safe",
                                                         "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"])]),
        // What mpinctl and mpin share: exit statuses, PIN input, error output, and the command-line
        // parser (own code, not swift-argument-parser, whose FoundationEssentials and regex modules
        // were half of the program's size; docs/PERFORMANCE.md §2.6).
        // Without the implicit _StringProcessing import, as the helper's modules: statically linked,
        // a single `contains(_:)` on a String brings 1.2 MB of regex engine into mpinctl.
        .target(name: "MPinCLI", dependencies: ["MPinClient", "MPinCrypto", "MPinLinux", "MPinPOSIX"], swiftSettings: moduleSettings),
        // The admin CLI: registration and user management over the same store and config.
        .target(name: "MPinCtlCommands", dependencies: [
            "MPinCLI", "MPinLogin", "MPinLinux", "MPinClient", "MPinCrypto", "MPinJSON", "MPinWire",
        ], swiftSettings: moduleSettings),
        // The user's own device, no root: tokens in the user's store, approvals of device logins.
        .target(name: "MPinUserCommands", dependencies: [
            "MPinCLI", "MPinLogin", "MPinLinux", "MPinClient", "MPinCrypto", "MPinJSON", "MPinWire",
        ], swiftSettings: moduleSettings),
        // mpinctl, and mpin when run by that name: the package installs one program for both,
        // so that they carry one static Swift runtime (docs/PERFORMANCE.md §2.6). Nothing in it
        // imports Foundation (not even FoundationEssentials, which swift-argument-parser brought).
        // Linked as mpin-pam-helper is, for size only (lld's --gc-sections and --icf, packed
        // relocations; not its libswiftCore.a copy, which links only with -static-stdlib, and this
        // program also links dynamically for the tests), and without the dynamic symbol table
        // SwiftPM asks for (--export-dynamic; nothing looks our symbols up by name): 7,490 KB
        // stripped (14,936 KB with swift-argument-parser, 16,264 KB without these link options,
        // 59,376 KB each for mpinctl and mpin with Foundation).
        .executableTarget(name: "mpinctl", dependencies: ["MPinCtlCommands", "MPinUserCommands"], swiftSettings: moduleSettings,
                          linkerSettings: [.unsafeFlags(["-use-ld=lld", "-Xlinker", "--gc-sections", "-Xlinker", "--icf=safe",
                                                         "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "--no-export-dynamic"])]),
        // mpin alone, for development and the tests (`swift build`); not packaged.
        .executableTarget(name: "mpin", dependencies: ["MPinUserCommands"], swiftSettings: moduleSettings),

        // MARK: Server

        // The backend roles: RPS, two D-TAs, M-Pin authentication server, OpenID provider, on SQLite or PostgreSQL.
        .target(name: "MPinServer", dependencies: [
            "MPinCrypto", "MPinWire", "MPinJSON", "MPinPOSIX",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "GRDB", package: "GRDB.swift"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            .product(name: "JWTKit", package: "jwt-kit"),
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "NIOCore", package: "swift-nio"),
            // The HTTP/1 parts a connection's guard follows (HTTP/ConnectionGuard.swift).
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "SwiftASN1", package: "swift-asn1"),
            .product(name: "X509", package: "swift-certificates"),
            .product(name: "Crypto", package: "swift-crypto"),
            // The RSA key of RS256 ID tokens (jwt-kit signs with it; this makes it).
            .product(name: "CryptoExtras", package: "swift-crypto"),
            .product(name: "CoreMetrics", package: "swift-metrics"),
            .product(name: "Prometheus", package: "swift-prometheus"),
            .product(name: "PostgresNIO", package: "postgres-nio"),
        ],
        // An import is internal unless it says otherwise (`package import`): a dependency
        // shows in MPinServer's interface only where a declaration the package uses names it.
        swiftSettings: [.enableUpcomingFeature("InternalImportsByDefault")]),
        // Linked small as mpin-pam-helper is, for size only (docs/PERFORMANCE.md §2.6): lld's
        // --gc-sections and --icf, packed relocations (RELR; not the libswiftCore.a copy, which
        // only links with -static-stdlib and this program also links dynamically for the tests),
        // and without the
        // dynamic symbol table SwiftPM asks for (--export-dynamic, 4.4 MB here; nothing looks the
        // server's symbols up by name): 81,072 KB stripped instead of 89,924 KB.
        .executableTarget(name: "mpin-server", dependencies: [
            "MPinServer",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ], linkerSettings: [.unsafeFlags(["-use-ld=lld", "-Xlinker", "--gc-sections", "-Xlinker", "--icf=safe",
                                                      "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "--no-export-dynamic"])]),

        // MARK: Tools

        // Recomputes Milagro-format M-Pin vector files.
        .target(name: "MPinVectorCheck", dependencies: ["MPinCrypto", "MPinWire"]),
        .executableTarget(name: "mpin-vectors", dependencies: ["MPinVectorCheck"]),
        // `make bench`: one line per operation, `NAME MICROSECONDS`.
        .executableTarget(name: "mpin-bench", dependencies: ["MPinCrypto"]),
        // `make bench`: authentications per second against a local release server.
        .executableTarget(name: "mpin-server-bench", dependencies: [
            "MPinServer", "MPinWire", "MPinCrypto", "MPinJSON", "MPinClient", "MPinLinux",
            .product(name: "Logging", package: "swift-log"),
        ]),
        // `make demo`: the protocol end to end in one process.
        .executableTarget(name: "mpin-demo", dependencies: ["MPinCrypto"]),
        // Test helper: one process hammering a FileStorage (concurrency and kill tests).
        .executableTarget(name: "mpin-storage-stress", dependencies: ["MPinLinux", "MPinTestSupport"]),
        // Test helper: the transport used before and after fork() (sshd forks its PAM children).
        .executableTarget(name: "mpin-fork-check", dependencies: ["MPinLinux", "MPinClient", "CCurlShim"]),

        // MARK: Tests

        // OpenSSL's libcrypto, used only by tests as an independent reference.
        .systemLibrary(name: "COpenSSL", path: "Sources/COpenSSL", pkgConfig: "libcrypto",
                       providers: [.apt(["libssl-dev"])]),
        // Locates the reference data kept beside the repository (../shared, or $MPIN_SHARED):
        // tests that need it are skipped, saying why, when it is absent.
        .target(name: "MPinReferenceData", path: "Tests/MPinReferenceData"),
        .testTarget(name: "MPinCryptoTests", dependencies: ["MPinCrypto", "MPinVectorCheck", "COpenSSL", "MPinReferenceData", "MPinTestSupport"]),
        .testTarget(name: "MPinJSONTests", dependencies: ["MPinJSON"]),
        .testTarget(name: "MPinWireTests", dependencies: ["MPinWire", "MPinCrypto", "MPinJSON"]),
        // The platform test doubles (in-memory storage, scripted, recorded and M-Pin backend
        // transports, the storage stress values), private directories and the one process runner,
        // for test targets and test-helper executables only.
        .target(name: "MPinTestSupport", dependencies: ["MPinClient", "MPinCrypto", "MPinWire", "MPinJSON"],
                path: "Tests/MPinTestSupport", exclude: ["Postgres"]),
        // The throwaway PostgreSQL databases of the server's PostgreSQL variants (MPIN_TEST_POSTGRES),
        // apart from MPinTestSupport so that the targets without a server do not load PostgresNIO.
        .target(name: "MPinPostgresTestSupport", dependencies: [
            "MPinServer",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "PostgresNIO", package: "postgres-nio"),
        ], path: "Tests/MPinTestSupport/Postgres"),
        .testTarget(name: "MPinClientTests",
                    dependencies: ["MPinClient", "MPinJSON", "MPinCrypto", "MPinTestSupport", "MPinReferenceData"]),
        .testTarget(name: "MPinLinuxTests",
                    dependencies: ["MPinLinux", "MPinClient", "MPinTestSupport", "mpin-storage-stress", "mpin-fork-check"]),
        .testTarget(name: "MPinLoginTests", dependencies: ["MPinLogin", "MPinClient", "MPinLinux", "MPinJSON", "MPinTestSupport"]),
        .testTarget(name: "MPinServerTests", dependencies: [
            "MPinServer", "MPinWire", "MPinCrypto", "MPinReferenceData", "MPinTestSupport", "MPinPostgresTestSupport",
            .product(name: "Hummingbird", package: "hummingbird"), .product(name: "GRDB", package: "GRDB.swift"),
            .product(name: "JWTKit", package: "jwt-kit"),
        ]),
        // mpinctl's exit statuses and output, running the built mpinctl against the built mpin-server;
        // doctor's analysis of pam.d stacks and sshd settings (MPinCtlCommands) and the command-line
        // parser (MPinCLI), in process.
        .testTarget(name: "MPinCtlTests", dependencies: ["MPinTestSupport", "MPinCtlCommands", "MPinCLI"]),
        // The client core over the Linux platform against mpin-server, in one process.
        .testTarget(name: "MPinEndToEndTests", dependencies: [
            "MPinClient", "MPinCrypto", "MPinLinux", "MPinJSON", "MPinServer", "MPinTestSupport",
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The MFA flavour (MPinMFA) over the Linux platform against mpin-server, in one process.
        .testTarget(name: "MPinMFATests", dependencies: [
            "MPinClient", "MPinCrypto", "MPinLinux", "MPinJSON", "MPinWire", "MPinServer", "MPinTestSupport",
            "MPinPostgresTestSupport",
            .product(name: "Logging", package: "swift-log"),
        ]),
    ]
)

// Swift 7's rules, now, for every Swift target of the package (not yet the fuzz harnesses below,
// which only `make fuzz` builds):
// ExistentialAny (an existential is spelled `any P`) and MemberImportVisibility (a member
// declared in module M is visible only in a file that imports M itself, not in one that gets it
// through another module's import), so that each file says what it depends on.
let swift7Features: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility")]
let cTargets: Set<String> = ["CCurlShim", "CTLSShim", "CTPMShim"]
for target in package.targets where target.type != .system && !cTargets.contains(target.name) {
    target.swiftSettings = (target.swiftSettings ?? []) + swift7Features
}

// `make fuzz` only (it sets MPIN_FUZZ=1 and builds in .build-fuzz): the libFuzzer harnesses.
// Declared only then, because their `main` calls libFuzzer's driver, which only
// -sanitize=fuzzer links in, and they read internals through @testable import, so they would
// neither link nor compile in a plain `swift build`.
// Only this package's own modules are instrumented (-sanitize=fuzzer,address per target,
// -enable-testing for the @testable imports); the dependencies (Hummingbird, NIO, GRDB,
// BoringSSL, …) build plain, as in a release build: sanitizing them all does not fit a small
// machine, and the fuzzers look for faults in our code, not theirs. The link flags go on the
// executables (lld: gold stops with an internal error on the sanitized objects).
if ProcessInfo.processInfo.environment["MPIN_FUZZ"] == "1" {
    let instrumented: Set<String> = ["MPinCrypto", "MPinJSON", "MPinWire", "MPinClient", "MPinPOSIX",
                                     "MPinLinux", "MPinLogin", "MPinServer"]
    let fuzzCompile: [String] = ["-sanitize=fuzzer,address", "-enable-testing"]
    for target in package.targets where instrumented.contains(target.name) {
        target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(fuzzCompile)]
    }
    let harnessSettings: [SwiftSetting] = [.unsafeFlags(["-parse-as-library"] + fuzzCompile), .enableExperimentalFeature("Extern")]
    let harnessLink: [LinkerSetting] = [.unsafeFlags(["-sanitize=fuzzer,address", "-use-ld=lld"])]
    // The parsers and decoders (MPIN_FUZZ_HARNESS picks one).
    // Sources/MPinFuzz/ModuleFrame.swift is a symbolic link to pam/Module/Frame.swift: the
    // frame parser of pam_mpin.so (harness `module`), compiled here against CPAMProtocol.
    package.targets.append(.executableTarget(name: "mpin-fuzz", dependencies: [
        "MPinJSON", "MPinWire", "MPinCrypto", "MPinLinux", "MPinLogin", "CPAMProtocol",
    ], path: "Sources/MPinFuzz", swiftSettings: harnessSettings, linkerSettings: harnessLink))
    package.products.append(.executable(name: "mpin-fuzz", targets: ["mpin-fuzz"]))
    // The server's request handling in process, every route (harness `server`).
    package.targets.append(.executableTarget(name: "mpin-fuzz-server", dependencies: [
        "MPinServer", "MPinWire", "MPinJSON",
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOEmbedded", package: "swift-nio"),
    ], path: "Sources/MPinFuzzServer", swiftSettings: harnessSettings, linkerSettings: harnessLink))
    package.products.append(.executable(name: "mpin-fuzz-server", targets: ["mpin-fuzz-server"]))
}
