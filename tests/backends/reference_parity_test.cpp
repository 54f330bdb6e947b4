// The backend seam, proved by a second backend: on every tiny fixture family (GGUF
// dense families, MoE families, the tiny llama / gemma3 rows, Hugging Face
// directories) the reference backend's whole-model logits (scalar code,
// lib/backends/reference) equal the CPU backend's within a float tolerance scaled by
// the logits' magnitude. Both run the same planned graph through backends::Program,
// behind Session with SessionOptions::device.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "backends/reference/reference_backend.h"
#include "backends/registry.h"
#include "uaii/session.h"

using namespace uaii;
namespace fs = std::filesystem;

namespace {

std::string Fixtures(const std::string& sub) { return std::string(UAII_FIXTURE_DIR) + "/" + sub; }

std::vector<TokenId> Prompt(const std::string& dir, int64_t n_vocab) {
  std::ifstream in(dir + "/prompt.txt");
  std::vector<TokenId> p{std::istream_iterator<TokenId>(in), std::istream_iterator<TokenId>()};
  if (p.empty())
    for (TokenId t = 1; t <= 24; ++t) p.push_back(t * 7 % static_cast<TokenId>(n_vocab));
  for (TokenId& t : p) t %= static_cast<TokenId>(n_vocab);
  if (p.size() > 24) p.resize(24);
  return p;
}

// Every prompt row's logits (one prefill pass), then three decode steps' logits.
std::vector<float> Logits(const std::shared_ptr<const Model>& m, const std::string& device,
                          const std::vector<TokenId>& prompt) {
  SessionOptions o;
  o.device = device;
  o.max_context = 64;
  o.threads = 2;
  auto s = Session::Create(m, o);
  INFO(device << ": " << s.status().ToString());
  REQUIRE(s.ok());
  auto all = (*s)->Eval(prompt, /*all_logits=*/true);
  INFO(all.status().ToString());
  REQUIRE(all.ok());
  std::vector<float> out = *all;
  for (TokenId t : {TokenId{3}, TokenId{5}, TokenId{7}}) {
    auto d = (*s)->Decode(t % static_cast<TokenId>(m->info().n_vocab));
    REQUIRE(d.ok());
    out.insert(out.end(), d->begin(), d->end());
  }
  return out;
}

// Per row: |cpu - ref| <= rel * max|cpu row| (a floor for rows near zero). The
// backends differ in exp (ggml's polynomial vs libm), sums (SIMD lanes in float vs
// double in order) and RoPE's sin/cos: float rounding, ~1e-4 of the logits' scale.
// Quantized weights pair with quantized activations (Q8_0 / Q8_1 / Q8_K, as ggml): a
// last-bit difference that moves an activation across a rounding boundary changes it
// by a whole quantum (1/127 of its block's largest value), so those models' logits
// differ by up to ~2.5% of their scale (0 on several, where no boundary is crossed).
// A wrong op (RoPE pairs, a norm, a mask, a routing) is off by the scale itself.
double Tolerance(const std::string& path) {
  const std::string name = fs::path(path).filename().string();
  if (name.find("f32") != std::string::npos) return 2e-3;
  if (name.find("f16") != std::string::npos) return 5e-3;  // f16 and bf16: rounded activations
  return 4e-2;
}

void CheckEqual(const std::string& path, const std::string& prompt_dir) {
  INFO(path);
  auto m = Model::Load(path);
  INFO(m.status().ToString());
  REQUIRE(m.ok());
  const auto prompt = Prompt(prompt_dir, (*m)->info().n_vocab);
  const auto cpu = Logits(*m, "cpu", prompt);
  const auto ref = Logits(*m, "reference", prompt);
  REQUIRE(cpu.size() == ref.size());
  const size_t V = static_cast<size_t>((*m)->info().n_vocab);
  REQUIRE(cpu.size() % V == 0);
  double worst = 0;
  const double rel_tol = Tolerance(path);
  for (size_t r = 0; r < cpu.size() / V; ++r) {
    double mag = 0, diff = 0;
    for (size_t i = r * V; i < (r + 1) * V; ++i) {
      REQUIRE(std::isfinite(ref[i]));
      mag = std::max(mag, std::fabs(static_cast<double>(cpu[i])));
      diff = std::max(diff, std::fabs(static_cast<double>(cpu[i]) - ref[i]));
    }
    const double rel = diff / std::max(mag, 1e-3);
    worst = std::max(worst, rel);
    INFO("row " << r << ": max |cpu - ref| " << diff << " at magnitude " << mag);
    CHECK(diff <= rel_tol * std::max(mag, 1e-3));
  }
  if (std::getenv("UAII_PRINT_PARITY")) std::printf("%s: worst relative difference %.3g\n", path.c_str(), worst);
}

std::vector<std::string> Files(const std::string& dir, const std::string& ext) {
  std::vector<std::string> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir))
    if (ext.empty() ? e.is_directory() : e.path().extension() == ext) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

void CheckDirectory(const std::string& sub, const std::string& ext, size_t at_least) {
  backends::reference::Registered();
  const std::string dir = Fixtures(sub);
  const auto paths = Files(dir, ext);
  INFO(dir << " (run tests/fixtures/make_*.py)");
  REQUIRE(paths.size() >= at_least);
  for (const auto& p : paths) {
    if (p.find("noeog") != std::string::npos) continue;  // cannot load: no end-of-generation token
    CheckEqual(p, ext.empty() ? p : dir);
  }
}

}  // namespace

TEST_CASE("reference backend: equals the CPU backend on every dense GGUF family fixture") {
  CheckDirectory("families", ".gguf", 16);
}

TEST_CASE("reference backend: equals the CPU backend on every MoE family fixture") {
  CheckDirectory("moe", ".gguf", 5);
}

TEST_CASE("reference backend: equals the CPU backend on the tiny llama and gemma3 rows") {
  CheckDirectory("tiny", ".gguf", 10);
}

TEST_CASE("reference backend: equals the CPU backend on every Hugging Face tiny directory") {
  CheckDirectory("hf_tiny", "", 17);
}

TEST_CASE("reference backend: registered as a device, never chosen by auto, reads its weights in place under a budget") {
  const auto& ref = backends::reference::Registered();
  auto sel = backends::SelectBackend("reference");
  REQUIRE(sel.ok());
  CHECK(*sel == &ref);
  CHECK(*backends::SelectBackend("auto") == &backends::Cpu());
  CHECK_FALSE(ref.SupportsOp("conv2d"));
  auto m = Model::Load(Fixtures("tiny/tiny-llama-q8_0.gguf"));
  REQUIRE(m.ok());
  SessionOptions o;
  o.device = "reference";
  o.max_context = 64;
  // The storage engine streams to the CPU's kernels only: another backend's session
  // gets no weight source under a budget and reads the weights through their bindings.
  o.ram_budget_bytes = uint64_t{1} << 30;
  auto s = Session::Create(*m, o);
  INFO(s.status().ToString());
  REQUIRE(s.ok());
  o.ram_budget_bytes = 0;
  auto plain = Session::Create(*m, o);
  REQUIRE(plain.ok());
  const std::vector<TokenId> prompt = {1, 2};
  auto r = (*s)->Eval(prompt);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  CHECK(*r == *(*plain)->Eval(prompt));
}
