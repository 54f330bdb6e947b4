#!/usr/bin/env bash
# Builds and tests the Swift SDK against a built libuaii (run by CTest; also by hand):
#   bindings/swift/scripts/test.sh <build-dir>
# The package's build products are cached in <build-dir>/swift (SwiftPM scratch path).
set -euo pipefail
BUILD_DIR=$(cd "${1:?usage: test.sh <build-dir>}" && pwd)
PKG_DIR=$(cd "$(dirname "$0")/.." && pwd)
SWIFT=${SWIFT:-$(command -v swift || echo /opt/swift/usr/bin/swift)}
if [ ! -e "$BUILD_DIR/libuaii.so" ] && [ ! -e "$BUILD_DIR/libuaii.dylib" ]; then
  echo "swift SDK: no libuaii in $BUILD_DIR (build the uaii_shared target first)" >&2
  exit 1
fi
flags=(--package-path "$PKG_DIR" --scratch-path "$BUILD_DIR/swift"
       -Xlinker -L"$BUILD_DIR" -Xlinker -rpath -Xlinker "$BUILD_DIR")
"$SWIFT" build "${flags[@]}" --build-tests
"$SWIFT" test "${flags[@]}" --skip-build --disable-swift-testing
# The example program streams from the default model.
"$BUILD_DIR/swift/debug/uaii-swift-example" "The capital of France is"
# A libuaii reporting another C ABI version (UAII_FAKE_ABI_LIB, preloaded) is refused at load.
if [ -n "${UAII_FAKE_ABI_LIB:-}" ]; then
  if out=$(LD_PRELOAD="$UAII_FAKE_ABI_LIB" "$BUILD_DIR/swift/debug/uaii-swift-example" 2>&1); then
    echo "swift SDK: a mismatched C ABI was not refused: $out" >&2; exit 1
  fi
  grep -q "C ABI is 0.6.0 but the Swift SDK was built against 0.5" <<<"$out" \
    || { echo "swift SDK: unclear version-mismatch message: $out" >&2; exit 1; }
  echo "swift SDK: a mismatched C ABI is refused: $out"
fi
