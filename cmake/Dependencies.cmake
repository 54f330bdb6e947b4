# The core dependencies: what the library itself links, from Debian's packages
# (scripts/setup.sh installs them). Required; a missing one stops the configure naming
# its package. Dependencies of one module are found in that module's CMakeLists.txt
# (libcurl: lib/hub, OpenSSL: lib/util, FlatBuffers: lib/ir, sentencepiece and ICU:
# lib/tokenizers); optional pieces (tests, benchmarks, io_uring, libedit, the SDKs) are
# options (cmake/Features.cmake, docs/building.md).
find_package(absl CONFIG QUIET)
uaii_require("${absl_FOUND}" "Abseil" libabsl-dev)
find_package(simdjson CONFIG QUIET)
uaii_require("${simdjson_FOUND}" "simdjson" libsimdjson-dev)
# Debian's libsimdjson is built threaded and its target says SIMDJSON_THREADS_ENABLED=1,
# which changes dom::parser's layout. Every translation unit that includes simdjson.h
# must agree (a test linking only a module that uses simdjson privately would not get
# the definition: an ODR violation that UBSan reports at -O2), so it is set globally.
add_compile_definitions(SIMDJSON_THREADS_ENABLED=1)
find_package(Threads REQUIRED)
find_package(PkgConfig QUIET)  # sentencepiece (core), liburing and libedit (optional)
uaii_require("${PKG_CONFIG_FOUND}" "pkg-config" pkg-config)
