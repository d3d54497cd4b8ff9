// swift-tools-version:6.0
import PackageDescription

// Layering: IfmeterAccounting (the pure counter rules, no dependency) and the
// C wrappers (CKernel over libnl/getifaddrs, CSQLite, CSystemd) -> IfmeterCore
// (model, classifier, accounting, store, config, export) -> thin executables.
let package = Package(
    name: "ifmeter",
    products: [
        .executable(name: "ifmeterd", targets: ["ifmeterd"]),
        .executable(name: "ifmeter", targets: ["ifmeter"]),
    ],
    targets: [
        .systemLibrary(
            name: "CNetlink",
            pkgConfig: "libnl-route-3.0",
            providers: [.apt(["libnl-3-dev", "libnl-route-3-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        .target(name: "CKernel", dependencies: ["CNetlink"]),
        // The counter rules: pure values, no dependency at all, so nothing
        // in them can read a clock, a file or the kernel (docs/ACCOUNTING.md).
        .target(name: "IfmeterAccounting"),
        .target(name: "IfmeterCore", dependencies: ["IfmeterAccounting", "CKernel", "CSQLite", "CSystemd"]),
        .executableTarget(name: "ifmeterd", dependencies: ["IfmeterCore"]),
        .executableTarget(name: "ifmeter", dependencies: ["IfmeterCore"]),
        // make bench's measuring tool (the floor: a bare dump through CKernel).
        .executableTarget(name: "ifmeter-bench", dependencies: ["CKernel", "IfmeterCore"]),
        // Test support only: creates tun devices and pushes exact traffic
        // inside a network namespace the tests made (`ip netns exec`).
        .target(name: "CTestTun"),
        .executableTarget(name: "ifmeter-testnet", dependencies: ["CTestTun"]),
        .testTarget(
            name: "IfmeterCoreTests",
            dependencies: ["IfmeterAccounting", "IfmeterCore", "CTestTun", "ifmeterd", "ifmeter", "ifmeter-testnet"],
            exclude: ["Golden", "Corpus"]
        ),
    ]
)
