# Every dependency comes from Debian's packages (scripts/setup.sh installs them).
find_package(absl CONFIG REQUIRED)
find_package(simdjson CONFIG REQUIRED)
# Debian's libsimdjson is built threaded and its target says SIMDJSON_THREADS_ENABLED=1,
# which changes dom::parser's layout. Every translation unit that includes simdjson.h
# must agree (a test linking only a module that uses simdjson privately would not get
# the definition: an ODR violation that UBSan reports at -O2), so it is set globally.
add_compile_definitions(SIMDJSON_THREADS_ENABLED=1)
find_package(FlatBuffers CONFIG REQUIRED)  # targets flatbuffers::flatbuffers(_shared)
find_package(CURL REQUIRED)
# pybind11 through CMake's FindPython (its legacy FindPythonInterp trips over pyenv shims).
set(PYBIND11_FINDPYTHON ON)
find_package(Python COMPONENTS Interpreter Development.Module REQUIRED)
find_package(pybind11 CONFIG REQUIRED)
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(SENTENCEPIECE REQUIRED IMPORTED_TARGET sentencepiece)
pkg_check_modules(LIBEDIT REQUIRED IMPORTED_TARGET libedit)
pkg_check_modules(LIBURING REQUIRED IMPORTED_TARGET liburing)
find_program(FLATC flatc REQUIRED)
if(UAII_BUILD_TESTS)
  find_package(Catch2 REQUIRED)   # bookworm ships Catch2 v2: <catch2/catch.hpp>
  include(Catch)
endif()
