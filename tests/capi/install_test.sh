#!/usr/bin/env bash
# The installed C ABI as another project sees it (docs/c_api.md, "Installing"):
# `cmake --install` into a scratch prefix, then examples/c/stream_reply.c built with
# `pkg-config --cflags --libs uaii` alone and a CMake project using find_package(uaii),
# each run against the tiny fixture model.
#   install_test.sh BUILD_DIR SOURCE_DIR FIXTURE_MODEL
set -euo pipefail
BUILD=$1 SRC=$2 MODEL=$3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
PREFIX="$TMP/prefix"
cmake --install "$BUILD" --prefix "$PREFIX" --component uaii_capi >/dev/null
LIBDIR=$(dirname "$(find "$PREFIX" -name 'libuaii.so.0' | head -1)")
PC_DIR=$(dirname "$(find "$PREFIX" -name uaii.pc)")
[ "$(PKG_CONFIG_PATH="$PC_DIR" pkg-config --modversion uaii)" = 0.5.0 ] || { echo "install: uaii.pc version" >&2; exit 1; }

# 1. A C program with pkg-config's flags only (no path into the source tree or build).
cc -std=c99 -Wall -Wextra -pedantic -Werror "$SRC/examples/c/stream_reply.c" -o "$TMP/stream_reply" \
  $(PKG_CONFIG_PATH="$PC_DIR" pkg-config --cflags --libs uaii) -Wl,-rpath,"$LIBDIR"
out=$("$TMP/stream_reply" "tok5 tok6" "$MODEL" 2>&1)
grep -q "prompt tokens" <<<"$out" || { echo "install: pkg-config build did not run: $out" >&2; exit 1; }
echo "install: pkg-config build ran: ${out##*$'\n'}"

# 2. A CMake project with find_package(uaii 0.5 CONFIG REQUIRED) and uaii::uaii.
mkdir -p "$TMP/consumer"
cat >"$TMP/consumer/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(uaii_consumer C)
find_package(uaii 0.5 CONFIG REQUIRED)
add_executable(version version.c)
target_link_libraries(version PRIVATE uaii::uaii)
CMAKE
cat >"$TMP/consumer/version.c" <<'C'
#include <stdio.h>
#include "uaii.h"
int main(void) {
  printf("%s\n", uaii_capi_version_string());
  return uaii_capi_version() == UAII_CAPI_VERSION ? 0 : 1;
}
C
cmake -S "$TMP/consumer" -B "$TMP/consumer/build" -DCMAKE_PREFIX_PATH="$PREFIX" >/dev/null
cmake --build "$TMP/consumer/build" >/dev/null
[ "$("$TMP/consumer/build/version")" = 0.5.0 ] || { echo "install: find_package build gave another version" >&2; exit 1; }
echo "install: find_package(uaii) build ran"

# 3. Structured output from the installed package alone: examples/c/json_output.c evaluates
# the prompt, samples with its own chain under a JSON Schema one step at a time, and what
# it prints must parse as JSON that the schema allows.
cc -std=c99 -Wall -Wextra -pedantic -Werror "$SRC/examples/c/json_output.c" -o "$TMP/json_output" \
  $(PKG_CONFIG_PATH="$PC_DIR" pkg-config --cflags --libs uaii) -Wl,-rpath,"$LIBDIR"
SCHEMA='{"type": "object", "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 99}, "kind": {"enum": ["x", "y"]}}, "required": ["n", "kind"], "additionalProperties": false}'
json=$("$TMP/json_output" "$SCHEMA" "tok5 tok6" "$MODEL")
python3 - "$json" <<'PY' || { echo "install: json_output printed no valid document: $json" >&2; exit 1; }
import json, sys
doc = json.loads(sys.argv[1])
assert set(doc) == {"n", "kind"} and 0 <= doc["n"] <= 99 and doc["kind"] in ("x", "y"), doc
PY
echo "install: json_output (a JSON Schema over the C ABI) printed $json"

# 4. The C++ API from the installed package (component uaii_cxx): a CMake project with
# find_package(uaii) and uaii::uaii_cxx, and the same program with pkg-config uaii-cxx.
cmake --install "$BUILD" --prefix "$PREFIX" --component uaii_cxx >/dev/null
mkdir -p "$TMP/cxx"
cat >"$TMP/cxx/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(uaii_cxx_consumer CXX)
set(CMAKE_CXX_STANDARD 20)
find_package(uaii 0.5 CONFIG REQUIRED)
add_executable(generate generate.cpp)
target_link_libraries(generate PRIVATE uaii::uaii_cxx)
CMAKE
cat >"$TMP/cxx/generate.cpp" <<'CPP'
#include <cstdio>
#include "uaii/generation.h"
int main(int argc, char** argv) {
  auto model = uaii::Model::Load(argv[1]);
  if (!model.ok()) { std::fprintf(stderr, "%s\n", std::string(model.status().message()).c_str()); return 1; }
  uaii::SessionOptions so;
  so.threads = 1;
  auto gen = uaii::Generator::Create(*model, so);
  if (!gen.ok()) return 1;
  uaii::GenerationRequest req;
  req.prompt = *(*model)->tokenizer().Encode("tok5 tok6");
  req.max_tokens = 6;
  auto r = (*gen)->Run(req);
  if (!r.ok()) return 1;
  std::printf("%zu tokens: %s\n", r->tokens.size(), r->text.c_str());
  return r->tokens.empty() ? 1 : 0;
}
CPP
cmake -S "$TMP/cxx" -B "$TMP/cxx/build" -DCMAKE_PREFIX_PATH="$PREFIX" >/dev/null
cmake --build "$TMP/cxx/build" >/dev/null
LD_LIBRARY_PATH="$LIBDIR" "$TMP/cxx/build/generate" "$MODEL" || { echo "install: the C++ consumer failed" >&2; exit 1; }
c++ "$TMP/cxx/generate.cpp" -o "$TMP/cxx/generate_pc" $(PKG_CONFIG_PATH="$PC_DIR" pkg-config --cflags --libs uaii-cxx) \
  -Wl,-rpath,"$LIBDIR"
"$TMP/cxx/generate_pc" "$MODEL" >/dev/null || { echo "install: the pkg-config C++ consumer failed" >&2; exit 1; }
echo "install: C++ API consumers (find_package uaii::uaii_cxx, pkg-config uaii-cxx) ran"
