// swift-tools-version:6.0
// Signet: a self-hosted passkey and device-bound-key authentication server.
// The target graph follows ../shared/DESIGN.md; dependencies point downward only.
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "signet",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "SignetWebAuthn", targets: ["SignetWebAuthn"]),
        .library(name: "SignetSoftware", targets: ["SignetSoftware"]),
        .library(name: "SignetClient", targets: ["SignetClient"]),
        .executable(name: "signet", targets: ["signet"]),
    ],
    targets: [
        // System libraries, each wrapped once by the Swift target above it.
        .systemLibrary(
            name: "COpenSSL", pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]),
        .systemLibrary(
            name: "CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(
            name: "CPostgres", pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]),
        .systemLibrary(
            name: "CCurl", pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(
            name: "CQRencode", pkgConfig: "libqrencode",
            providers: [.apt(["libqrencode-dev"])]),
        // The C library's calls that the toolchain's Glibc module leaves out, wrapped in C once.
        .target(name: "CSystem"),

        .target(name: "SignetCrypto", dependencies: ["COpenSSL"], swiftSettings: strict),
        .target(name: "SignetHTTP", dependencies: ["CSystem"], swiftSettings: strict),
        .target(name: "SignetAPI", swiftSettings: strict),
        // The hosted pages: templates, their text in each language, the one script and stylesheet.
        .target(name: "SignetWeb", dependencies: ["SignetAPI"], swiftSettings: strict),
        // libcurl, wrapped once: SMTP for the outbox (and HTTPS clients later).
        .target(name: "SignetCurl", dependencies: ["CCurl"], swiftSettings: strict),
        // libqrencode, wrapped once: QR codes for the terminal.
        .target(name: "SignetQR", dependencies: ["CQRencode"], swiftSettings: strict),
        // Ceremonies and policy: no HTTP, no database, no C library of its own. It declares the
        // Store protocol that the SQL stores below implement.
        .target(name: "SignetAuth", dependencies: ["SignetCrypto", "SignetWebAuthn", "SignetAPI"], swiftSettings: strict),
        .target(name: "SignetStore", dependencies: ["SignetAuth", "SignetCrypto", "SignetWebAuthn", "CSQLite", "CPostgres", "CSystem"], swiftSettings: strict),
        // The SDK core: Foundation only, on Linux and Apple platforms.
        .target(name: "SignetClient", dependencies: ["SignetAPI"], swiftSettings: strict),
        .target(
            name: "SignetServer",
            dependencies: ["SignetAuth", "SignetCrypto", "SignetWebAuthn", "SignetHTTP", "SignetStore", "SignetAPI", "SignetCurl", "SignetWeb", "CSystem"],
            swiftSettings: strict),
        .target(name: "SignetWebAuthn", dependencies: ["SignetCrypto"], swiftSettings: strict),
        .target(
            name: "SignetSoftware", dependencies: ["SignetCrypto", "SignetWebAuthn", "SignetClient", "SignetAPI"],
            swiftSettings: strict),
        .executableTarget(
            name: "signet",
            dependencies: ["SignetAuth", "SignetCrypto", "SignetWebAuthn", "SignetSoftware", "SignetServer", "SignetHTTP", "SignetAPI", "SignetStore", "SignetClient", "SignetQR", "CSystem"],
            swiftSettings: strict),
        // libFuzzer harness: scripts/fuzz.sh builds it with -sanitize=fuzzer; a plain build
        // makes a corpus replayer out of the same code.
        .executableTarget(
            name: "SignetFuzz", dependencies: ["SignetWebAuthn", "SignetCrypto", "SignetAuth", "SignetServer", "SignetStore", "SignetAPI", "SignetHTTP", "SignetCurl", "SignetWeb", "SignetSoftware"], swiftSettings: strict),

        .testTarget(
            name: "SignetClientTests", dependencies: ["SignetClient", "SignetSoftware", "SignetAPI", "SignetHTTP", "SignetWebAuthn", "SignetQR", "SignetCrypto", "SignetTestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "SignetAuthTests", dependencies: ["SignetAuth", "SignetStore", "SignetAPI", "SignetSoftware", "SignetWebAuthn", "SignetCrypto", "SignetTestSupport"],
            swiftSettings: strict),
        // What more than one test target needs, and nothing outside the tests.
        .target(name: "SignetTestSupport", dependencies: ["CSQLite", "SignetHTTP", "SignetCrypto", "SignetWebAuthn"], path: "Tests/SignetTestSupport", swiftSettings: strict),
        .testTarget(name: "SignetStoreTests", dependencies: ["SignetStore", "SignetAuth", "SignetCrypto", "CSQLite", "SignetTestSupport"], swiftSettings: strict),
        .testTarget(
            name: "SignetCryptoTests", dependencies: ["SignetCrypto"], swiftSettings: strict),
        .testTarget(
            name: "SignetServerTests",
            dependencies: ["SignetServer", "SignetAuth", "SignetHTTP", "SignetStore", "SignetAPI", "SignetClient", "SignetSoftware", "SignetCrypto", "SignetWebAuthn",
                           "SignetWeb", "SignetTestSupport", "CSystem"],
            swiftSettings: strict),
        .testTarget(
            name: "SignetWebAuthnTests",
            dependencies: ["SignetWebAuthn", "SignetCrypto", "SignetSoftware", "SignetTestSupport"],
            swiftSettings: strict),
    ]
)

#if canImport(Darwin)
// Apple-platform adapters (AuthenticationServices, CryptoKit Secure Enclave, Keychain). On Linux
// they are checked with `swiftc -parse` by scripts/test.sh.
package.products.append(.library(name: "SignetClientApple", targets: ["SignetClientApple"]))
package.targets.append(.target(name: "SignetClientApple", dependencies: ["SignetClient", "SignetAPI"], swiftSettings: strict))
#endif
