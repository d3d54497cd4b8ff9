// swift-tools-version:6.0
import PackageDescription

// Layering: C wrappers (CKernel over libnl/getifaddrs/sd_notify, CSQLite) -> IfmeterCore
// (model, classifier, accounting, store, config, export) -> thin executables.
let package = Package(
    name: "ifmeter",
    products: [
        .executable(name: "ifmeterd", targets: ["ifmeterd"]),
        .executable(name: "ifmeter", targets: ["ifmeter"]),
        .library(name: "IfmeterCore", targets: ["IfmeterCore"]),
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
        .target(name: "CKernel", dependencies: ["CNetlink"]),
        .target(name: "IfmeterCore", dependencies: ["CKernel", "CSQLite"]),
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
            dependencies: ["IfmeterCore", "CTestTun", "ifmeterd", "ifmeter", "ifmeter-testnet"],
            exclude: ["Golden"]
        ),
    ]
)
