#!/usr/bin/env bash
# The C++ suite (every ctest test but the slow ones) under AddressSanitizer + UBSan, with
# leak detection. It builds in the fuzzers' directory (build-fuzz: clang 14, the whole
# build instrumented with -fsanitize=address,undefined, UBSan not recovering), so the
# library is compiled once for the fuzz targets and this suite. .ci/run runs it.
#   bash scripts/sanitize.sh [CTEST_ARGS...]      (after scripts/setup.sh)
# UAII_SANITIZE=ON in an ordinary build directory is the same check with gcc.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${UAII_FUZZ_BUILD_DIR:-build-fuzz}
source scripts/common.sh
configure_instrumented_build "$BUILD_DIR" || exit 1
cmake --build "$BUILD_DIR" -j"$(nproc)" || exit 1
# The suites read their fixtures from the build dir: share the main build's when made.
MAIN_FIXTURES="$PWD/${UAII_BUILD_DIR:-build}/fixtures"
if [ -d "$MAIN_FIXTURES/tiny" ] && [ ! -e "$BUILD_DIR/fixtures" ]; then
  ln -s "$MAIN_FIXTURES" "$BUILD_DIR/fixtures"
fi
make_fixtures "$BUILD_DIR/fixtures" || exit 1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1
export LSAN_OPTIONS=suppressions=$PWD/scripts/lsan.supp
# The Vulkan suite on lavapipe only: the loader otherwise opens every installed driver,
# and the Intel one's driconf parsing deadlocks in the sanitizer's regexec interceptor.
lvp_icd=$(ls /usr/share/vulkan/icd.d/lvp_icd.*.json 2>/dev/null | head -1)
export VK_ICD_FILENAMES=${lvp_icd:-/nonexistent}
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir "$BUILD_DIR" -LE slow --output-on-failure -j"$(nproc)" "$@"
