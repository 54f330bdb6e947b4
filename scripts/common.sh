# Sourced by the scripts in this folder: shared paths and the fixture step.
UAII_CACHE="${UAII_HOME:-$HOME/.cache/uaii}"
# llama.cpp's source package (test data: its tokenizer vocabularies), see setup.sh.
LLAMA_CPP_SDIST="$UAII_CACHE/downloads/llama_cpp_python-0.3.36.tar.gz"

# make_fixtures DIR: runs every tests/fixtures/make_*.py generator into DIR.
make_fixtures() {
  local dir=$1
  mkdir -p "$dir"
  if [ -f "$LLAMA_CPP_SDIST" ]; then export UAII_LLAMA_CPP_SDIST="${UAII_LLAMA_CPP_SDIST:-$LLAMA_CPP_SDIST}"; fi
  local gen
  for gen in tests/fixtures/make_*.py; do
    python3 "$gen" "$dir" || { echo "fixture generator $gen failed" >&2; return 1; }
  done
}

# configure_instrumented_build DIR: the clang 14 build that instruments everything with
# ASan + UBSan (+ libFuzzer's coverage): the fuzz targets (scripts/fuzz.sh) and the C++
# suite under the sanitizers (scripts/sanitize.sh) share it, so CI compiles the library
# once for both.
configure_instrumented_build() {
  command -v clang++-14 >/dev/null || { echo "clang++-14 not found (bash scripts/setup.sh installs clang-14 libclang-rt-14-dev)" >&2; return 2; }
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
  cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
    -DUAII_BUILD_FUZZERS=ON -DUAII_BUILD_TESTS=ON -DUAII_BUILD_BENCHMARKS=OFF \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache | { grep -- '^-- uaii:' || true; }
  return "${PIPESTATUS[0]}"
}
