// Mixture-of-experts families (docs/moe.md) against llama.cpp: iterates the goldens
// tests/golden/llamacpp/moe-*.json (tests/oracles/llamacpp_moe.py, llama-cpp-python;
// CPU, F16 KV cache, no flash attention) over the tiny random GGUFs of
// tests/fixtures/make_moe_models.py (8 experts, top-2, packed quantized banks, a
// router tie between experts 2 and 5 on every token).
//
// Per family: the 64-token prompt prefilled whole, and again in chunks of 13 / 27 / 24
// tokens; all 64 logit rows are compared.
//   whole vs llama.cpp:  max |dlogit| <= tolerance(type) + golden rounding (1 / (2 scale))
//   chunked vs whole:    bit-identical (routing and experts are per row)
// The tolerances are the dense families' (families_test.cpp): float-order drift of
// the kernels against ggml's SIMD paths, for logits up to ~5; scaled down with the
// golden's max |logit| below that (granite divides logits by logit_scale 8), since
// drift scales with the values. Reversing the tie order of the router's argsort
// (higher index first) moves max |dlogit| to 0.91 (mixtral), 2.14 (qwen2moe), 4.04
// (qwen3moe), 0.080 and 0.088 (granitemoe, against tolerances 0.017 / 0.042).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <zlib.h>

#include "../runtime/golden.h"
#include "runtime/moe.h"
#include "simdjson.h"
#include "uaii/session.h"

using namespace uaii;
using namespace uaii::testing;

namespace {

double MoeTolerance(const std::string& type) {
  if (type == "f32" || type == "f16") return 0.01;
  if (type == "q2_k" || type == "q3_k" || type == "q4_k" || type == "q5_k" || type == "q6_k") return 0.3;
  return 0.15;
}

std::vector<float> I16FromZlibB64(std::string_view b64, size_t n, double scale) {
  std::string comp = Base64Decode(b64);
  std::vector<int16_t> q(n);
  uLongf len = static_cast<uLongf>(n * 2);
  if (uncompress(reinterpret_cast<Bytef*>(q.data()), &len, reinterpret_cast<const Bytef*>(comp.data()),
                 comp.size()) != Z_OK ||
      len != n * 2)
    return {};
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(q[i] / scale);
  return v;
}

}  // namespace

TEST_CASE("moe: tiny random MoE models of every family match llama.cpp") {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(GoldenDir())) {
    const std::string fname = entry.path().filename().string();
    if (fname.rfind("moe-", 0) != 0 || entry.path().extension() != ".json") continue;
    simdjson::dom::parser parser;
    auto doc = parser.load(entry.path().string());
    REQUIRE(doc.error() == simdjson::SUCCESS);
    const std::string family = std::string(std::string_view(doc["family"]));
    const std::string type = std::string(std::string_view(doc["type"]));
    const std::string path = std::string(UAII_FIXTURE_DIR) + "/" + std::string(std::string_view(doc["model_file"]));
    if (!std::filesystem::exists(path)) FAIL("missing fixture " << path << " (run make_moe_models.py)");
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
    double max_diff = 0, max_abs = 0;
    for (float v : want) max_abs = std::max(max_abs, double(std::fabs(v)));
    for (size_t i = 0; i < want.size(); ++i) max_diff = std::max(max_diff, double(std::fabs((*whole)[i] - want[i])));
    const double tol = MoeTolerance(type) * std::min(1.0, max_abs / 5.0) + 0.5 / scale;
    std::printf("moe %-18s max |dlogit| = %.6f (tolerance %.4f)\n", family.c_str(), max_diff, tol);
    CHECK(max_diff <= tol);

    auto s = NewSession(m, 256);
    std::vector<float> chunked;
    size_t at = 0;
    for (size_t len : {13, 27, 24}) {
      auto part = s->Eval(std::span<const TokenId>(prompt.data() + at, len), /*all_logits=*/true);
      REQUIRE(part.ok());
      chunked.insert(chunked.end(), part->begin(), part->end());
      at += len;
    }
    REQUIRE(at == prompt.size());
    CHECK(chunked == *whole);
    ++n;
  }
  CHECK(n >= 4);
}

TEST_CASE("moe: routing ties go to the lower expert index, as ggml's argsort") {
  using namespace uaii::runtime;
  MoeParams p;
  p.n_expert = 6;
  p.n_expert_used = 2;
  // Row 0: experts 1, 2 and 4 tie for first place; row 1: 3 wins, 0 and 5 tie for second.
  const float probs[12] = {0.1f, 0.3f, 0.3f, 0.1f, 0.3f, 0.0f, 0.2f, 0.1f, 0.1f, 0.4f, 0.1f, 0.2f};
  int32_t sel[4];
  float w[4];
  MoeRoute(p, probs, nullptr, 2, sel, w);
  CHECK(sel[0] == 1);
  CHECK(sel[1] == 2);
  CHECK(sel[2] == 3);
  CHECK(sel[3] == 0);
  CHECK(w[0] == 0.3f);  // not renormalised
  p.norm_w = true;
  MoeRoute(p, probs, nullptr, 2, sel, w);
  CHECK(w[2] == 0.4f / static_cast<float>(double(0.4f) + double(0.2f)));
  // A selection bias changes the choice but not the weights.
  const float bias[6] = {0, 0, 0, 0, 0, 1.0f};
  p.norm_w = false;
  MoeRoute(p, probs, bias, 2, sel, w);
  CHECK(sel[0] == 5);
  CHECK(w[0] == 0.0f);
}

TEST_CASE("moe: expert slices of a packed bank") {
  using namespace uaii::runtime;
  std::vector<uint8_t> bytes(8 * 3 * 34);  // Q8_0 bank [8, 3, 32]: 34-byte rows
  BoundWeight bank;
  bank.type = TensorType::Q8_0;
  bank.shape = {8, 3, 32};
  bank.data = bytes.data();
  bank.bytes = bytes.size();
  bank.row_bytes = 34;
  bank.offset = 1000;
  BoundWeight e5 = ExpertSlice(bank, 5);
  CHECK(e5.shape == std::vector<int64_t>{3, 32});
  CHECK(e5.bytes == 3 * 34);
  CHECK(e5.data == bytes.data() + 5 * 3 * 34);
  CHECK(e5.offset == 1000 + 5 * 3 * 34);
}
