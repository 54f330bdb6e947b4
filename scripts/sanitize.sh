#!/usr/bin/env bash
# The C++ suite under AddressSanitizer + UBSan, in its own build directory.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${UAII_ASAN_BUILD_DIR:-build-asan}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DUAII_SANITIZE=ON \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)"
source scripts/common.sh
make_fixtures "$BUILD_DIR/fixtures"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir "$BUILD_DIR" -LE slow --output-on-failure -j"$(nproc)"
