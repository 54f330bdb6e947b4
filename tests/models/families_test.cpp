// Every architecture row of tests/fixtures/make_family_models.py against llama.cpp:
// iterates the goldens tests/golden/llamacpp/families-*.json (written by
// tests/oracles/llamacpp_families.py with llama-cpp-python; CPU, F16 KV cache, no
// flash attention), so adding a row and its golden adds its test.
//
// Per family: the 64-token prompt prefilled whole, and again in chunks of 13 / 27 / 20
// tokens followed by four single-token decode steps; all 64 logit rows are compared.
//   whole vs llama.cpp:  max |dlogit| <= QuantTypeTolerance(type) + golden rounding
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
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(GoldenDir())) {
    const std::string fname = entry.path().filename().string();
    if (fname.rfind("families-", 0) != 0 || entry.path().extension() != ".json") continue;
    simdjson::dom::parser parser;
    auto doc = parser.load(entry.path().string());
    REQUIRE(doc.error() == simdjson::SUCCESS);
    const std::string family = std::string(std::string_view(doc["family"]));
    const std::string type = std::string(std::string_view(doc["type"]));
    const std::string path = std::string(UAII_FIXTURE_DIR) + "/" + std::string(std::string_view(doc["model_file"]));
    if (!std::filesystem::exists(path)) FAIL("missing fixture " << path << " (run make_family_models.py)");
    auto prompt = Ints(doc["prompt_tokens"]);
    const int64_t n_vocab = int64_t(doc["n_vocab"]);
    const double scale = double(doc["scale"]);
    auto want = I16FromZlibB64(std::string_view(doc["logits_i16_zlib_b64"]), prompt.size() * n_vocab, scale);
    REQUIRE(want.size() == prompt.size() * n_vocab);
    INFO("family " << family);
    auto m = Load(path);
    auto whole = NewSession(m, 256)->Eval(prompt, /*all_logits=*/true);
    INFO(whole.status().ToString());
    REQUIRE(whole.ok());
    REQUIRE(whole->size() == want.size());
    double max_diff = 0;
    for (size_t i = 0; i < want.size(); ++i) max_diff = std::max(max_diff, double(std::fabs((*whole)[i] - want[i])));
    const double tol = QuantTypeTolerance(type) + 0.5 / scale;
    std::printf("families %-18s max |dlogit| = %.6f (tolerance %.4f)\n", family.c_str(), max_diff, tol);
    CHECK(max_diff <= tol);

    auto s = NewSession(m, 256);
    std::vector<float> chunked;
    size_t at = 0;
    for (size_t len : {13, 27, 20, 1, 1, 1, 1}) {  // the last four as single-token decode steps
      auto part = s->Eval(std::span<const TokenId>(prompt.data() + at, len), /*all_logits=*/true);
      REQUIRE(part.ok());
      chunked.insert(chunked.end(), part->begin(), part->end());
      at += len;
    }
    REQUIRE(at == prompt.size());
    CHECK(chunked == *whole);
    ++n;
  }
  CHECK(n >= 13);
}
