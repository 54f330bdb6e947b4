#!/usr/bin/env bash
# Builds llama.cpp's llama-server from the llama.cpp tree vendored in the llama-cpp-python
# sdist that setup.sh downloads (scripts/common.sh: LLAMA_CPP_SDIST). Benchmark-only: the
# reference for benchmarks/bench_serve.py, never shipped with uaii.
#
# Prints the binary's path on stdout (progress goes to stderr). The binary is cached, keyed
# by the sdist's name, so a second run returns at once.
#   bash benchmarks/build_llama_server.sh            # -> .../llama-server
#   LLAMA_SERVER_JOBS=1 bash benchmarks/build_llama_server.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh

sdist="${UAII_LLAMA_CPP_SDIST:-$LLAMA_CPP_SDIST}"
[ -f "$sdist" ] || { echo "llama.cpp source package not found: $sdist (bash scripts/setup.sh downloads it)" >&2; exit 2; }
name=$(basename "$sdist" .tar.gz)
root="$UAII_CACHE/llama-server-build/$name"
binary="$root/build/bin/llama-server"

if [ -x "$binary" ]; then echo "$binary"; exit 0; fi

mkdir -p "$root"
# The whole sdist is extracted, not just vendor/llama.cpp: its .git/modules keeps the
# submodule's history, which llama.cpp's build-info reads to stamp the commit into the binary.
if [ ! -f "$root/src/vendor/llama.cpp/CMakeLists.txt" ]; then
  echo "extracting $sdist" >&2
  rm -rf "$root/src"; mkdir -p "$root/src"
  tar xzf "$sdist" -C "$root/src" --strip-components=1
fi

launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); fi

# GGML_NATIVE: the same -march=native uaii's own Release build gets, so both engines use
# this CPU's full instruction set. No UI (it would be fetched from the network or built with
# npm), no OpenSSL (the benchmark talks plain HTTP on 127.0.0.1), no tests or examples.
echo "configuring llama-server in $root/build" >&2
cmake -S "$root/src/vendor/llama.cpp" -B "$root/build" "${generator[@]}" "${launcher[@]}" \
  -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=ON \
  -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
  -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF \
  >&2
echo "building llama-server (a while on 2 cores)" >&2
nice -n 15 cmake --build "$root/build" --target llama-server -j "${LLAMA_SERVER_JOBS:-2}" >&2
[ -x "$binary" ] || { echo "build finished but $binary is missing" >&2; exit 1; }
echo "$binary"
