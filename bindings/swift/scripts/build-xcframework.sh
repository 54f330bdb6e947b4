#!/usr/bin/env bash
# NOT TESTED HERE: it needs macOS with Xcode, and uaii's dependencies built for each Apple
# platform (see docs/swift.md, "Apple platforms", for the known blockers). Kept as the
# reference recipe for the Apple path.
#
# Builds libuaii (target uaii_shared) for macOS, iOS and the iOS simulator, wraps each build
# as CUaii.framework (the dylib, uaii.h, a framework module map named CUaii so that
# `import CUaii` in the Uaii target keeps working), and joins them into CUaii.xcframework.
#
#   bindings/swift/scripts/build-xcframework.sh [OUT_DIR]
#
# Per-slice dependency prefixes (Abseil, simdjson, FlatBuffers, sentencepiece, ICU, ...),
# passed as CMAKE_PREFIX_PATH:
#   UAII_DEPS_MACOS, UAII_DEPS_IOS, UAII_DEPS_IOS_SIMULATOR
# Then use it from the package: UAII_XCFRAMEWORK=CUaii.xcframework swift build
# (the path is relative to bindings/swift; copy or link the xcframework there).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
OUT=${1:-$ROOT/build-xcframework}
DEPLOY_MACOS=${DEPLOY_MACOS:-13.0}
DEPLOY_IOS=${DEPLOY_IOS:-16.0}
mkdir -p "$OUT"

# build_slice NAME SYSTEM SYSROOT ARCHS DEPLOYMENT DEPS
build_slice() {
  local name=$1 system=$2 sysroot=$3 archs=$4 deploy=$5 deps=$6
  local dir="$OUT/$name"
  cmake -S "$ROOT" -B "$dir/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_SYSTEM_NAME="$system" -DCMAKE_OSX_SYSROOT="$sysroot" \
    -DCMAKE_OSX_ARCHITECTURES="$archs" -DCMAKE_OSX_DEPLOYMENT_TARGET="$deploy" \
    -DCMAKE_PREFIX_PATH="$deps" \
    -DUAII_BUILD_TESTS=OFF -DUAII_BUILD_SWIFT=OFF -DUAII_BUILD_KOTLIN=OFF
  cmake --build "$dir/build" --target uaii_shared

  local dylib
  dylib=$(find "$dir/build" -maxdepth 1 -name 'libuaii.*.dylib' -type f | head -n 1)
  [ -n "$dylib" ] || { echo "build-xcframework: no libuaii dylib in $dir/build" >&2; exit 1; }

  local fw="$dir/CUaii.framework" bin_rel headers modules plist
  rm -rf "$fw"
  if [ "$system" = Darwin ]; then
    # macOS frameworks use the versioned bundle layout.
    mkdir -p "$fw/Versions/A/Headers" "$fw/Versions/A/Modules" "$fw/Versions/A/Resources"
    ln -s A "$fw/Versions/Current"
    for l in CUaii Headers Modules Resources; do ln -s "Versions/Current/$l" "$fw/$l"; done
    bin_rel=Versions/A/CUaii
    headers="$fw/Versions/A/Headers" modules="$fw/Versions/A/Modules" plist="$fw/Versions/A/Resources/Info.plist"
  else
    mkdir -p "$fw/Headers" "$fw/Modules"
    bin_rel=CUaii
    headers="$fw/Headers" modules="$fw/Modules" plist="$fw/Info.plist"
  fi
  cp "$dylib" "$fw/$bin_rel"
  install_name_tool -id "@rpath/CUaii.framework/$bin_rel" "$fw/$bin_rel"
  cp "$ROOT/capi/uaii.h" "$headers/uaii.h"
  cat > "$modules/module.modulemap" <<'MAP'
framework module CUaii [system] {
  header "uaii.h"
  export *
}
MAP
  cat > "$plist" <<PLIST
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>CFBundleExecutable</key><string>CUaii</string>
  <key>CFBundleIdentifier</key><string>dev.uaii.CUaii</string>
  <key>CFBundleName</key><string>CUaii</string>
  <key>CFBundlePackageType</key><string>FMWK</string>
  <key>CFBundleShortVersionString</key><string>0.5.0</string>
  <key>CFBundleVersion</key><string>0.5.0</string>
  <key>MinimumOSVersion</key><string>$deploy</string>
</dict>
</plist>
PLIST
}

build_slice macos Darwin macosx "arm64;x86_64" "$DEPLOY_MACOS" "${UAII_DEPS_MACOS:-}"
build_slice ios iOS iphoneos arm64 "$DEPLOY_IOS" "${UAII_DEPS_IOS:-}"
build_slice ios-simulator iOS iphonesimulator "arm64;x86_64" "$DEPLOY_IOS" "${UAII_DEPS_IOS_SIMULATOR:-}"

rm -rf "$OUT/CUaii.xcframework"
xcodebuild -create-xcframework \
  -framework "$OUT/macos/CUaii.framework" \
  -framework "$OUT/ios/CUaii.framework" \
  -framework "$OUT/ios-simulator/CUaii.framework" \
  -output "$OUT/CUaii.xcframework"
echo "build-xcframework: $OUT/CUaii.xcframework"
