#!/usr/bin/env bash
# Builds the kernel library (lib/kernels, with the NEON row kernels of
# vec_dot_neon.cpp) and its Catch2 tests for aarch64 with Debian's cross compiler, and
# runs them under qemu-user: every NEON kernel against the scalar reference bit for
# bit (tests/kernels/dispatch_test.cpp: awkward lengths, rows around the tile edges,
# batches 1..9, 1-4 threads, misaligned pointers), plus the existing matmul and
# thread pool suites on aarch64.
#
# Not part of .ci/run: it installs packages (root) and emulation takes minutes.
# Usage: scripts/test_neon.sh [BUILD_DIR] [catch2 test spec / options...]
#   BUILD_DIR defaults to build-neon; e.g. scripts/test_neon.sh build-neon "[dispatch]"
#
# Debian packages it installs when missing: g++-aarch64-linux-gnu, qemu-user, and
# libabsl-dev:arm64 (multiarch: the kernels' absl::Status needs arm64 Abseil; adds the
# arm64 dpkg architecture). Catch2 is header-only and comes from the host's catch2.
#
# Why a small direct build instead of the top-level CMake project: the project needs
# a dozen dependencies (simdjson, FlatBuffers, oneDNN, ICU, ...) that would all have to
# exist as arm64 packages; the kernels need only Abseil, so this compiles lib/kernels,
# the three lib/formats codec files and the kernel tests, with the same flags as
# CMake (-ffp-contract=off for library code), and links Abseil statically.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-build-neon}
shift || true
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
CXX_CROSS=aarch64-linux-gnu-g++
ABSL_LIB=/usr/lib/aarch64-linux-gnu

# --- packages ---
need=()
command -v "$CXX_CROSS" >/dev/null || need+=(g++-aarch64-linux-gnu)
command -v qemu-aarch64 >/dev/null || need+=(qemu-user)
[ -e "$ABSL_LIB/libabsl_status.a" ] || need+=(libabsl-dev:arm64)
[ -e /usr/include/catch2/catch.hpp ] || need+=(catch2)
if [ ${#need[@]} -gt 0 ]; then
  echo "test_neon: installing ${need[*]}"
  if [[ " ${need[*]} " == *":arm64 "* ]] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
    dpkg --add-architecture arm64
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

# --- build ---
cd "$ROOT"
mkdir -p "$BUILD/obj"
CXX=("$CXX_CROSS")
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="$ROOT" CCACHE_NOHASHDIR=true
  CXX=(ccache "$CXX_CROSS")
fi
# Flags as Makefile text (the string macros keep their quotes through make's shell).
COMMON=(-std=c++20 -O3 -Wall -Wextra -Wno-unused-parameter -Ilib -Iinclude -DNDEBUG
        "-DUAII_SOURCE_DIR='\"$ROOT\"'" "-DUAII_FIXTURE_DIR='\"$BUILD/fixtures\"'")
LIB_SOURCES=(lib/kernels/*.cpp lib/formats/tensor_type.cpp lib/formats/dequant_basic.cpp
             lib/formats/dequant_k.cpp)
TEST_SOURCES=(tests/catch_main.cpp tests/kernels/dispatch_test.cpp tests/kernels/matmul_test.cpp
              tests/kernels/thread_pool_test.cpp)
# (interleave_test.cpp is x86-only: it calls __builtin_cpu_supports.)

# A generated Makefile: parallel, incremental (-MMD header dependencies; a change
# of flags or sources rewrites it, which rebuilds everything).
BIN="$BUILD/uaii_kernels_tests_aarch64"
{
  echo "CXX := ${CXX[*]}"
  echo "FLAGS := ${COMMON[*]} -MMD -MP"
  echo "OBJS :="
  for src in "${LIB_SOURCES[@]}" "${TEST_SOURCES[@]}"; do
    obj="$BUILD/obj/${src//\//_}.o"
    extra=""
    # Library code as CMake builds it: no FMA contraction (the kernels' bit-exactness).
    [[ "$src" == lib/* ]] && extra="-ffp-contract=off"
    echo "OBJS += $obj"
    echo "$obj: $ROOT/$src $BUILD/Makefile"
    printf '\t$(CXX) $(FLAGS) %s -c $< -o $@\n' "$extra"
  done
  echo "$BIN: \$(OBJS)"
  printf '\t%s -static -o $@ $(OBJS) -Wl,--start-group %s/libabsl_*.a -Wl,--end-group -pthread\n' \
    "$CXX_CROSS" "$ABSL_LIB"
  echo "-include \$(OBJS:.o=.d)"
} > "$BUILD/Makefile.new"
# Replaced only when it changed: objects depend on it, so new flags rebuild them.
cmp -s "$BUILD/Makefile.new" "$BUILD/Makefile" 2>/dev/null || mv "$BUILD/Makefile.new" "$BUILD/Makefile"
rm -f "$BUILD/Makefile.new"
make -s -C "$ROOT" -f "$BUILD/Makefile" -j"$(nproc)" "$BIN"
echo "test_neon: built $BIN"

# --- fixtures (the Q8_0 quantizer golden needs numpy + gguf; skipped without them) ---
spec=("$@")
if ! python3 tests/fixtures/make_kernel_fixtures.py "$BUILD/fixtures" >/dev/null 2>&1; then
  echo "test_neon: SKIP the gguf.quants fixture test (make_kernel_fixtures.py needs numpy + gguf)"
  [ ${#spec[@]} -eq 0 ] && spec=("~matmul: Q8_0 activations bit-exact with gguf.quants.quantize")
fi

# --- run under emulation ---
# Twice: qemu's default CPU (every extension) and a Cortex-A53 (plain ARMv8.0), which
# checks that the kernels need nothing beyond baseline Advanced SIMD.
export UAII_FIXTURE_DIR="$BUILD/fixtures"
for cpu in max cortex-a53; do
  echo "test_neon: qemu-aarch64 -cpu $cpu"
  qemu-aarch64 -cpu "$cpu" -L /usr/aarch64-linux-gnu "$BIN" "${spec[@]}"
done
