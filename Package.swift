// swift-tools-version:6.0
import PackageDescription

// Layering: IfmeterAccounting (the pure counter rules, no dependency) and the
// C wrappers (CKernel over libnl/getifaddrs/sd_notify, CSQLite, CZlib) -> IfmeterCore
// (model, classifier, accounting, store, config, export) -> thin executables.
// Release builds are for resident memory: the daemon's is mostly code, its
// own and the static Swift runtime's, paged in by 64 KiB fault-around
// windows, so what counts is how many windows the code that runs touches.
// -Osize and lld with packed relative relocations (glibc 2.36's DT_RELR) took
// ifmeterd alone from 11.0 to 10.3 MiB RSS and 7.2 to 6.5 MiB PSS (medians of
// three runs), for about 9 % more CPU in a sample pass (0.68 to 0.74 µs per
// link at N = 1000). The flags below, each measured by bench/memory.sh (RSS
// KiB, medians of three runs, the binary's own pages in brackets):
//   as before                                     10764 (5168)
//   no _StringProcessing/_RegexParser             10200 (4552)
//   static libstdc++, no exported symbols          9076 (4372)
//   running functions first (link/ifmeterd.order)  7788 (3016)
//   segments aligned to 64 KiB                     7324 (2584)
//   unnamed functions first (link/ifmeterd.ld)     7176 (2392)
//   static unwinder, no libgcc_s                   6996 (2328)
// In one run, as before -> now: RSS 10.7 -> 6.8 MiB, PSS 9.2 -> 5.3, USS 8.9
// -> 4.9 (PSS and USS move with what else maps the same libraries). A sample
// pass costs the same (0.87 ms at N = 1000 either way); a relink 0.4 s.
let sizeSettings: [SwiftSetting] = [
    .unsafeFlags(["-Osize", "-Xfrontend", "-function-sections"], .when(configuration: .release)),
    // Imported implicitly, each brings a module the daemon does not use:
    // one call into _StringProcessing linked it and _RegexParser, 1 MB of code.
    .unsafeFlags([
        "-Xfrontend", "-disable-implicit-string-processing-module-import",
        "-Xfrontend", "-disable-implicit-concurrency-module-import",
    ]),
]
// link/: libstdc++.so, a linker script that makes -lstdc++ GCC's static
// libstdc++; ifmeterd.order, the daemon's functions in the order they run
// (bench/link-order.sh writes it); ifmeterd.ld, for those without a name.
let linkDirectory = Context.packageDirectory + "/link"
let sizeLinking: [LinkerSetting] = [
    .unsafeFlags([
        "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
        // Segments at file offsets congruent to their addresses modulo 64 KiB:
        // a fault then maps one 64 KiB page-cache folio, not parts of two.
        "-Xlinker", "-z", "-Xlinker", "max-page-size=65536",
        // Nothing loads code into the binary that would need its symbols.
        "-Xlinker", "--no-export-dynamic",
        // GCC's unwinder linked in (the runtime's crash backtrace is its only
        // user): libgcc_s.so.1 is then not loaded at all.
        "-L", linkDirectory, "-l:libgcc_eh.a",
    ], .when(configuration: .release)),
]
let daemonLinking = sizeLinking + [
    .unsafeFlags([
        "-Xlinker", "--symbol-ordering-file=\(linkDirectory)/ifmeterd.order", "-Xlinker", "--no-warn-symbol-ordering",
        "-Xlinker", "-T", "-Xlinker", "\(linkDirectory)/ifmeterd.ld",
    ], .when(configuration: .release)),
]

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
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .target(name: "CKernel", dependencies: ["CNetlink"]),
        // The counter rules: pure values, no dependency at all, so nothing
        // in them can read a clock, a file or the kernel (docs/ACCOUNTING.md).
        .target(name: "IfmeterAccounting", swiftSettings: sizeSettings),
        .target(name: "IfmeterCore", dependencies: ["IfmeterAccounting", "CKernel", "CSQLite", "CZlib"], swiftSettings: sizeSettings),
        .executableTarget(name: "ifmeterd", dependencies: ["IfmeterCore"], swiftSettings: sizeSettings, linkerSettings: daemonLinking),
        .executableTarget(name: "ifmeter", dependencies: ["IfmeterCore"], swiftSettings: sizeSettings, linkerSettings: sizeLinking),
        // make bench's measuring tool (the floor: a bare dump through CKernel).
        .executableTarget(name: "ifmeter-bench", dependencies: ["CKernel", "IfmeterAccounting", "IfmeterCore"]),
        // Test support only: creates tun devices and pushes exact traffic
        // inside a network namespace the tests made (`ip netns exec`).
        .target(name: "CTestTun"),
        .executableTarget(name: "ifmeter-testnet", dependencies: ["CTestTun"]),
        // Tests: the unit tests need no root, no socket and no binary; the
        // kernel tests use namespaces, tun and veth devices and the real daemon.
        .target(name: "IfmeterTestSupport", dependencies: ["IfmeterCore"], path: "Tests/IfmeterTestSupport"),
        .testTarget(
            name: "IfmeterUnitTests",
            dependencies: ["IfmeterAccounting", "IfmeterCore", "IfmeterTestSupport"],
            exclude: ["Golden"]
        ),
        .testTarget(
            name: "IfmeterKernelTests",
            dependencies: ["IfmeterAccounting", "IfmeterCore", "IfmeterTestSupport", "CTestTun", "ifmeterd", "ifmeter", "ifmeter-testnet"],
            exclude: ["Corpus"]
        ),
    ]
)
