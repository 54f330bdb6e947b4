#!/usr/bin/env bash
# The concurrency suite under ThreadSanitizer: eight threads, each with its own session
# over one shared model, generating, chatting, tokenizing and cancelling at once —
# through the C++ API (tests/concurrency/sessions_test.cpp), the C ABI
# (tests/concurrency/capi_threads_test.cpp) and the Python SDK with the GIL released
# (tests/python/test_sdk_threads.py, the SDK built over the TSan libuaii and run with the
# TSan runtime preloaded). No suppressions: any report fails the run.
#   bash scripts/tsan.sh            (after scripts/setup.sh; build dir: build-tsan)
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${UAII_TSAN_BUILD_DIR:-build-tsan}
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DUAII_TSAN=ON -DUAII_BUILD_BENCHMARKS=OFF \
  -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null || exit 1
cmake --build "$BUILD_DIR" -j"$(nproc)" --target uaii_concurrency_tests uaii_capi_concurrency_tests uaii_shared || exit 1

FIXTURES=${UAII_FIXTURE_DIR:-$PWD/${UAII_BUILD_DIR:-build}/fixtures}
if [ ! -f "$FIXTURES/sdk/tiny-llama-chat.gguf" ]; then
  source scripts/common.sh
  make_fixtures "$FIXTURES" || exit 1
fi
export UAII_FIXTURE_DIR="$FIXTURES"
# exitcode 66: a report fails the test even when every assertion held.
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1"
# Only lavapipe, as in scripts/sanitize.sh (other drivers' driconf parsing hangs under sanitizers).
lvp_icd=$(ls /usr/share/vulkan/icd.d/lvp_icd.*.json 2>/dev/null | head -1)
export VK_ICD_FILENAMES=${lvp_icd:-/nonexistent}
rc=0
for t in concurrency/uaii_concurrency_tests concurrency/uaii_capi_concurrency_tests; do
  echo "tsan: $t"
  "$BUILD_DIR/tests/$t" || { echo "tsan: $t FAILED" >&2; rc=1; }
done

# The Python SDK over the TSan libuaii, installed into the build dir (not the user's site).
PY_TARGET="$BUILD_DIR/python"
if [ ! -f "$PY_TARGET/uaii/libuaii.so.0" ] || [ "$BUILD_DIR/libuaii.so.0" -nt "$PY_TARGET/uaii/libuaii.so.0" ]; then
  rm -rf "$PY_TARGET"
  UAII_PREBUILT_DIR="$BUILD_DIR" CMAKE_CXX_COMPILER_LAUNCHER=ccache python3 -m pip install -q --no-build-isolation \
    --no-deps --target "$PY_TARGET" -C build-dir="$PWD/$BUILD_DIR/python-build" ./bindings/python || exit 1
fi
echo "tsan: tests/python/test_sdk_threads.py"
# The interpreter is not instrumented, so the runtime is preloaded; into the real
# executable, not a pyenv shim (a shell script). -s: pytest must not capture stderr,
# where a report goes. The suppression file is glibc's, not uaii's (it says why).
PY=$(python3 -c 'import sys; print(sys.executable)')
TSAN_OPTIONS="$TSAN_OPTIONS suppressions=$PWD/scripts/tsan_python.supp" LD_PRELOAD="$(gcc -print-file-name=libtsan.so.2)" \
  PYTHONPATH="$PWD/$PY_TARGET" "$PY" -m pytest tests/python/test_sdk_threads.py -q -s -p no:cacheprovider ||
  { echo "tsan: python FAILED" >&2; rc=1; }
exit $rc
