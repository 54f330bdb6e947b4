# Optional pieces of the build. Each is a cache variable AUTO (the default), ON or OFF,
# resolved at every configure (installing a package later turns its piece on):
#   AUTO  on when what it needs was found; otherwise off, with a STATUS line naming
#         what is missing: an optional piece never fails the configure;
#   ON    required: the configure fails, naming what is missing;
#   OFF   off, whatever is installed.
# The list of options and the Debian packages behind them: docs/building.md.
#
# uaii_feature(VAR "doc" FOUND "what is missing" [WITHOUT "what happens instead"]
#              [AUTO_OFF "reason"])
#   sets VAR_ON (ON/OFF) in the caller's scope. FOUND is a truth value ("${X_FOUND}",
#   quoted so that an empty one still counts as an argument). WITHOUT completes the
#   STATUS line of an AUTO that is off. AUTO_OFF: AUTO means OFF for that reason even
#   when FOUND (an explicit ON still turns the piece on).
function(uaii_feature var doc found missing)
  cmake_parse_arguments(F "" "WITHOUT;AUTO_OFF" "" ${ARGN})
  set(${var} AUTO CACHE STRING "${doc}: AUTO, ON or OFF")
  set_property(CACHE ${var} PROPERTY STRINGS AUTO ON OFF)
  string(TOUPPER "${${var}}" value)
  if(value STREQUAL "AUTO")
    if(F_AUTO_OFF)
      set(on OFF)
      message(STATUS "uaii: ${var} is off: ${F_AUTO_OFF}")
    elseif(found)
      set(on ON)
    else()
      set(on OFF)
      if(F_WITHOUT)
        message(STATUS "uaii: ${var} is off: ${missing}; ${F_WITHOUT}")
      else()
        message(STATUS "uaii: ${var} is off: ${missing}")
      endif()
    endif()
  elseif(${var})
    if(NOT found)
      message(FATAL_ERROR "uaii: ${var} is ${${var}} but ${missing} (or configure with -D${var}=AUTO or OFF)")
    endif()
    set(on ON)
  else()
    set(on OFF)
  endif()
  set(${var}_ON ${on} PARENT_SCOPE)
  set_property(GLOBAL APPEND PROPERTY UAII_FEATURE_SUMMARY "${var}=${on}")
endfunction()

# One STATUS line with every option's outcome (the end of the top-level CMakeLists.txt).
function(uaii_feature_summary)
  get_property(summary GLOBAL PROPERTY UAII_FEATURE_SUMMARY)
  list(JOIN summary ", " text)
  message(STATUS "uaii: ${text}")
endfunction()

# uaii_require(FOUND "what" "Debian package"): a core dependency the library links.
function(uaii_require found what package)
  if(NOT found)
    message(FATAL_ERROR "uaii: ${what} is required and was not found (Debian: apt-get install ${package}; "
                        "bash scripts/setup.sh installs every package the build uses)")
  endif()
endfunction()

# UAII_BUILD_FUZZERS: the libFuzzer targets (fuzz/, docs/reliability.md). AUTO means OFF:
# every object of the build is then instrumented (-fsanitize=fuzzer-no-link,address,
# undefined), so it takes a build directory of its own (scripts/fuzz.sh: build-fuzz,
# CMAKE_CXX_COMPILER=clang++-14 from Debian's clang-14 with libclang-rt-14-dev).
include(CheckCXXSourceCompiles)
set(fuzzer_found OFF)
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  set(CMAKE_REQUIRED_FLAGS "-fsanitize=fuzzer,address,undefined")
  check_cxx_source_compiles("#include <cstddef>
#include <cstdint>
extern \"C\" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }" UAII_LIBFUZZER_WORKS)
  unset(CMAKE_REQUIRED_FLAGS)
  if(UAII_LIBFUZZER_WORKS)
    set(fuzzer_found ON)
  endif()
endif()
uaii_feature(UAII_BUILD_FUZZERS "the libFuzzer targets (fuzz/; instruments the whole build)" "${fuzzer_found}"
             "the compiler is not clang with libFuzzer (Debian: clang-14 libclang-rt-14-dev; -DCMAKE_CXX_COMPILER=clang++-14)"
             AUTO_OFF "it instruments the whole build: configure a build directory of its own with -DUAII_BUILD_FUZZERS=ON (scripts/fuzz.sh)")
if(UAII_BUILD_FUZZERS_ON)
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined -gline-tables-only)
  # C programs (the C ABI's header and growth checks, examples/) load an instrumented
  # C++ libuaii: they need UBSan's C++ runtime too, which clang's C driver leaves out.
  add_link_options(-fsanitize=address,undefined "$<$<LINK_LANGUAGE:C>:-fsanitize-link-c++-runtime>"
                   "$<$<LINK_LANGUAGE:C>:-lstdc++>")
endif()
