#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine (root, pyenv Python 3.11) for uaii and runs the
# main job. Idempotent: installs only what is missing, rebuilds incrementally.
#   bash scripts/setup.sh            install, build, install the default model, run it
#   bash scripts/setup.sh --no-run   the same without the final run (CI)
set -euo pipefail
cd "$(dirname "$0")/.."
RUN=1
for a in "$@"; do
  case "$a" in
    --no-run) RUN=0 ;;
    *) echo "usage: scripts/setup.sh [--no-run]" >&2; exit 2 ;;
  esac
done
BUILD_DIR=${UAII_BUILD_DIR:-build}

# 1. Build dependencies, from Debian's packages (docs/building.md: which option each serves;
#    the core library's are required, the others turn their piece on).
APT_PACKAGES=(
  # toolchain and the tools the scripts and tests run
  build-essential cmake ninja-build pkg-config ccache git time sentencepiece
  # the core library
  libabsl-dev libsimdjson-dev libflatbuffers-dev flatbuffers-compiler libcurl4-openssl-dev libssl-dev
  libsentencepiece-dev libicu-dev libonig-dev
  # optional pieces: tests (UAII_BUILD_TESTS), io_uring (UAII_IO_URING), line editing
  # (UAII_LIBEDIT), the oneDNN benchmark (UAII_ONEDNN), the Kotlin SDK (UAII_BUILD_KOTLIN;
  # its tests parse JSON with Gson)
  catch2 zlib1g-dev liburing-dev libedit-dev libdnnl-dev default-jdk-headless kotlin junit4 libgoogle-gson-java
  # the Python SDK (bindings/python, built by pip below)
  pybind11-dev
  # `uaii serve` (UAII_SERVER): cpp-httplib, the HTTP library llama-server is built on; the
  # dashboard's browser test (tests/python/test_dashboard.py): headless Chromium and its driver
  libcpp-httplib-dev chromium chromium-driver
  # the libFuzzer targets (UAII_BUILD_FUZZERS, scripts/fuzz.sh): Debian's clang with its
  # fuzzer and sanitizer runtimes
  clang-14 libclang-rt-14-dev
  # the Vulkan backend (UAII_VULKAN): Vulkan-Hpp headers and the loader, glslc for the
  # compute shaders, spirv-tools; Mesa's CPU driver lavapipe and vulkaninfo for its tests
  libvulkan-dev glslc spirv-tools mesa-vulkan-drivers vulkan-tools
)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# 2. Test dependencies (and the default model's packages), from PyPI, pinned.
python3 -m pip install -q --disable-pip-version-check -r requirements/test.txt
#    Ray Serve, the Python SDK's `ray` extra (uaii.serve_ray, tests/python/test_serve_ray.py).
python3 -m pip install -q --disable-pip-version-check -r requirements/ray.txt

# 3. Build (Release, warnings on), cached by ccache across runs and across clones
#    (CI builds a fresh clone each time: paths are hashed relative to the checkout).
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
#    The configure prints only its "uaii:" lines: which optional pieces are on, and why
#    one is off (docs/building.md).
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache | { grep -- '^-- uaii:' || true; }
cmake --build "$BUILD_DIR" -j"$(nproc)"
# 3a. The C ABI as an installed package under the default prefix (/usr/local; cmake's
#    component uaii_capi: libuaii.so, uaii.h, uaii.pc, find_package(uaii)), so C programs
#    build with `pkg-config --cflags --libs uaii` and `swift build` in bindings/swift needs
#    no flags. UAII_INSTALL_PREFIX changes the prefix; UAII_NO_INSTALL=1 skips it.
if [ "${UAII_NO_INSTALL:-0}" != 1 ]; then
  cmake --install "$BUILD_DIR" --component uaii_capi ${UAII_INSTALL_PREFIX:+--prefix "$UAII_INSTALL_PREFIX"} >/dev/null
  command -v ldconfig >/dev/null && ldconfig
fi
# 3b. The Python SDK (bindings/python), linking the libuaii.so just built (not a second engine build).
UAII_PREBUILT_DIR="$BUILD_DIR" CMAKE_CXX_COMPILER_LAUNCHER=ccache python3 -m pip install -q --disable-pip-version-check \
  --no-build-isolation -C build-dir="$(cd "$BUILD_DIR" && pwd)/python" ./bindings/python

# 4. The default model into the cache ($UAII_HOME, default ~/.cache/uaii), SHA-256 checked.
python3 scripts/install_default_model.py

# 5. Test data: llama.cpp's source package carries its own tokenizer test vocabularies
#    (models/ggml-vocab-*.gguf with .inp/.out); tests/fixtures/make_llama_vocabs.py
#    extracts them. Downloaded once from PyPI (not installed), cached.
source scripts/common.sh
if [ ! -f "$LLAMA_CPP_SDIST" ]; then
  python3 -m pip download -q --disable-pip-version-check --no-deps -d "$(dirname "$LLAMA_CPP_SDIST")" llama-cpp-python==0.3.36 \
    || echo "setup: warning: could not download llama.cpp's vocabulary test files; those tests will SKIP" >&2
fi

# 6. The main job.
if [ "$RUN" = 1 ]; then
  "$BUILD_DIR/uaii" generate -p "The capital of France is" --max-tokens 32
fi
