// The cross-path guard: a Hugging Face directory and the GGUF that convert_hf_to_gguf.py
// makes of it (tests/fixtures/make_cross_path_models.py, one pair per family from the
// same weights) must give the same logits. The two loaders describe one model; any
// difference in how a source's hyper-parameters, tensor views (permuted q/k, 1 + w
// norms, transposed Conv1D, fused projections, expert banks) or RoPE conventions reach
// the builder shows up here, whichever references the families are also checked against.
//
// Tolerance: relative to the logits' magnitude. Both files hold the same values in the
// same dtypes, so most pairs are bit-identical; what may differ is summation order
// (llama's q/k rows permuted for the interleaved RoPE pairing), a few float ulps
// (measured: llama 2e-6, Mixtral 2e-5, llama3 rope_freqs 7e-5 of the largest logit; with
// BF16 weights the llama3 pair drifts 2e-3, as BF16-rounded activations amplify it, so
// that row is F32 and qwen2 covers BF16).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "uaii/session.h"

using namespace uaii;

namespace {

std::vector<float> AllLogits(const std::string& path, const std::vector<TokenId>& prompt) {
  auto model = Model::Load(path);
  INFO(path);
  REQUIRE(model.ok());
  SessionOptions opt;
  opt.threads = 1;
  opt.max_context = 64;  // phi3: within original_max_position_embeddings, the short factors
  auto session = Session::Create(*model, opt);
  REQUIRE(session.ok());
  auto logits = (*session)->Eval(prompt, /*all_logits=*/true);
  REQUIRE(logits.ok());
  return *logits;
}

}  // namespace

TEST_CASE("cross path: a Hugging Face directory and its GGUF conversion give the same logits") {
  const std::string dir = std::string(UAII_FIXTURE_DIR) + "/cross_path";
  if (!std::filesystem::exists(dir)) {
    WARN("SKIP: " << dir << " missing (tests/fixtures/make_cross_path_models.py)");
    return;
  }
  // Ids below 256: byte tokens in both vocabularies; 48 positions cross Gemma's window of 8.
  std::vector<TokenId> prompt;
  for (int i = 0; i < 48; ++i) prompt.push_back(static_cast<TokenId>(3 + (i * 37 + 11) % 250));
  int pairs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".gguf") continue;
    const std::string name = entry.path().stem().string();
    const std::string hf_dir = dir + "/" + name;
    if (!std::filesystem::is_directory(hf_dir)) continue;
    std::vector<float> from_hf = AllLogits(hf_dir, prompt);
    std::vector<float> from_gguf = AllLogits(entry.path().string(), prompt);
    REQUIRE(from_hf.size() == from_gguf.size());
    double max_abs = 0, max_diff = 0;
    for (size_t i = 0; i < from_hf.size(); ++i) {
      max_abs = std::max(max_abs, static_cast<double>(std::fabs(from_gguf[i])));
      max_diff = std::max(max_diff, static_cast<double>(std::fabs(from_hf[i] - from_gguf[i])));
    }
    const double limit = 1e-4 * max_abs;
    std::printf("cross path %-10s max |dlogit| = %.3g (max |logit| %.3g, tolerance %.3g)\n", name.c_str(), max_diff,
                max_abs, limit);
    INFO(name);
    CHECK(max_abs > 0);
    CHECK(max_diff <= limit);
    ++pairs;
  }
  CHECK(pairs >= 11);
}

TEST_CASE("hf: a model_type outside the family table fails, naming the supported ones") {
  const std::string src = std::string(UAII_FIXTURE_DIR) + "/cross_path/llama";
  if (!std::filesystem::exists(src)) {
    WARN("SKIP: " << src << " missing (tests/fixtures/make_cross_path_models.py)");
    return;
  }
  // The llama layout under a model_type whose math differs (granite's multipliers):
  // refused, where reading it as llama would compute another model.
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("uaii_cross_path_granite." + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::copy(src, dir);
  std::ifstream in(dir / "config.json");
  std::string cfg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  const std::string from = "\"model_type\": \"llama\"";
  REQUIRE(cfg.find(from) != std::string::npos);
  cfg.replace(cfg.find(from), from.size(), "\"model_type\": \"granite\"");
  std::ofstream(dir / "config.json") << cfg;
  auto model = Model::Load(dir.string());
  REQUIRE(!model.ok());
  const std::string msg(model.status().message());
  INFO(msg);
  CHECK(msg.find("model_type \"granite\" is not supported; supported: llama mistral mixtral") != std::string::npos);
  std::filesystem::remove_all(dir);
}
