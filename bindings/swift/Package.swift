// swift-tools-version: 6.0
// The Swift SDK of uaii: a thin, safe layer over the C ABI (capi/uaii.h, libuaii).
// libuaii and uaii.h are found through pkg-config (uaii.pc, which scripts/setup.sh
// installs with the library under /usr/local): `swift build` and `swift test` need no
// flags. Against a build directory instead:
//   swift build -Xlinker -L<build> -Xlinker -rpath -Xlinker <build>
// (bindings/swift/scripts/test.sh does this, so CI tests the library it just built). On Apple platforms see docs/swift.md:
// UAII_XCFRAMEWORK=<path relative to this directory> swaps the module map for a prebuilt
// CUaii.xcframework (scripts/build-xcframework.sh).
import PackageDescription

let cUaii: Target = Context.environment["UAII_XCFRAMEWORK"].map { .binaryTarget(name: "CUaii", path: $0) }
  // The C ABI as a Clang module: a module map over capi/uaii.h that links libuaii.
  ?? .systemLibrary(name: "CUaii", path: "Sources/CUaii", pkgConfig: "uaii")

let package = Package(
  name: "Uaii",
  platforms: [.macOS(.v13), .iOS(.v16)],
  products: [
    .library(name: "Uaii", targets: ["Uaii"]),
    .executable(name: "uaii-swift-example", targets: ["UaiiExample"]),
  ],
  targets: [
    cUaii,
    .target(name: "Uaii", dependencies: ["CUaii"]),
    .executableTarget(name: "UaiiExample", dependencies: ["Uaii"]),
    .testTarget(name: "UaiiTests", dependencies: ["Uaii"]),
  ]
)
