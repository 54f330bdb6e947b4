// Every architecture row of tests/fixtures/make_family_models.py against llama.cpp:
// iterates the goldens tests/golden/llamacpp/families-*.json (written by
// tests/oracles/llamacpp_families.py with llama-cpp-python; CPU, F16 KV cache, no
// flash attention), so adding a row and its golden adds its test.
//
// Per family: the 64-token prompt prefilled whole, and again in chunks of 13 / 27 / 20
// tokens followed by four single-token decode steps; all 64 logit rows are compared.
//   whole vs llama.cpp:  max |dlogit| <= QuantTypeRelTolerance(type) * max |logit| + golden rounding
//                        (1 / (2 * scale), the golden stores int16 round(logit * scale))
//   chunked vs whole:    bit-identical (prefill is row-exact)
// The tolerances bound float-order drift between our kernels and llama.cpp's SIMD
// paths; quantized activations (Q8_0 / Q8_1 / Q8_K) turn a last-bit difference into a
// whole quantum now and then, so the drift grows with weight quantization.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "../runtime/golden.h"
#include "simdjson.h"
#include "uaii/session.h"

using namespace uaii;
using namespace uaii::testing;


TEST_CASE("families: tiny random models of every architecture match llama.cpp") {
  // The last four chunks are single-token decode steps.
  const int n = CheckTableGoldens("families-", "make_family_models.py",
                                  [](const std::string& type, double max_abs) {
                                    return QuantTypeRelTolerance(type) * max_abs;
                                  },
                                  {13, 27, 20, 1, 1, 1, 1});
  CHECK(n >= 24);  // every row of make_family_models.FAMILIES
}
