// The Vulkan backend (lib/backends/vulkan) against the CPU backend, on whatever device
// the loader lists (CI: Mesa's lavapipe, named by "vulkan"; a real GPU likewise):
// whole-model logits of the tiny fixtures within stated tolerances, chunked prefill
// against whole prefill, weights split into row chunks, device selection. Without a
// Vulkan device every case prints a SKIP line and passes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "backends/registry.h"
#include "backends/vulkan/vk_device.h"
#include "uaii/session.h"

using namespace uaii;
namespace fs = std::filesystem;

namespace {

std::string Fixtures(const std::string& sub) { return std::string(UAII_FIXTURE_DIR) + "/" + sub; }

bool HaveVulkan() {
  auto d = backends::vulkan::ListDevices();
  if (!d.ok()) {
    std::printf("SKIP: no Vulkan device: %s\n", std::string(d.status().message()).c_str());
    return false;
  }
  return true;
}

std::vector<TokenId> Prompt(int64_t n_vocab) {
  std::vector<TokenId> p;
  for (TokenId t = 1; t <= 20; ++t) p.push_back(t * 7 % static_cast<TokenId>(n_vocab));
  return p;
}

// Every prompt row's logits (prefill in chunks of `chunk`), then three decode steps'.
std::vector<float> Logits(const std::shared_ptr<const Model>& m, const std::string& device,
                          const std::vector<TokenId>& prompt, int64_t chunk = 512) {
  SessionOptions o;
  o.device = device;
  o.max_context = 64;
  o.threads = 2;
  o.prefill_chunk = chunk;
  auto s = Session::Create(m, o);
  INFO(device << ": " << s.status().ToString());
  REQUIRE(s.ok());
  auto all = (*s)->Eval(prompt, /*all_logits=*/true);
  INFO(all.status().ToString());
  REQUIRE(all.ok());
  std::vector<float> out = *all;
  for (TokenId t : {TokenId{3}, TokenId{5}, TokenId{7}}) {
    auto d = (*s)->Decode(t % static_cast<TokenId>(m->info().n_vocab));
    INFO(d.status().ToString());
    REQUIRE(d.ok());
    out.insert(out.end(), d->begin(), d->end());
  }
  return out;
}

// The worst row's max |a - b| over the row's magnitude.
double WorstRelative(const std::vector<float>& a, const std::vector<float>& b, size_t V) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (size_t r = 0; r < a.size() / V; ++r) {
    double mag = 0, diff = 0;
    for (size_t i = r * V; i < (r + 1) * V; ++i) {
      REQUIRE(std::isfinite(b[i]));
      mag = std::max(mag, std::fabs(static_cast<double>(a[i])));
      diff = std::max(diff, std::fabs(static_cast<double>(a[i]) - b[i]));
    }
    worst = std::max(worst, diff / std::max(mag, 1e-3));
  }
  return worst;
}

// Tolerances per weight type, relative to the logits' magnitude. F32: float rounding
// of a different summation order, the device's exp/sin/cos and online softmax
// (~1e-4 measured). The device multiplies f32 activations by the weights where the
// CPU quantizes activations to Q8_0 / Q8_K first (as ggml): a few percent on a random
// tiny model. Requantized types (K-quants) add their half-step of Q8_0.
double Tolerance(const std::string& path) {
  const std::string name = fs::path(path).filename().string();
  if (name.find("f32") != std::string::npos) return 2e-3;
  if (name.find("f16") != std::string::npos) return 5e-3;
  return 6e-2;
}

}  // namespace

TEST_CASE("vulkan: the tiny llama and gemma3 rows' logits equal the CPU's within tolerance", "[vulkan]") {
  if (!HaveVulkan()) return;
  for (const auto& e : fs::directory_iterator(Fixtures("tiny"))) {
    const std::string path = e.path().string();
    if (e.path().extension() != ".gguf" || path.find("noeog") != std::string::npos) continue;
    INFO(path);
    auto m = Model::Load(path);
    REQUIRE(m.ok());
    const auto prompt = Prompt((*m)->info().n_vocab);
    const auto cpu = Logits(*m, "cpu", prompt);
    const auto gpu = Logits(*m, "vulkan", prompt);
    const double worst = WorstRelative(cpu, gpu, static_cast<size_t>((*m)->info().n_vocab));
    std::printf("vulkan parity %s: worst relative difference %.3g\n", e.path().filename().c_str(), worst);
    CHECK(worst <= Tolerance(path));
  }
}

TEST_CASE("vulkan: chunked prefill equals whole prefill", "[vulkan]") {
  if (!HaveVulkan()) return;
  auto m = Model::Load(Fixtures("tiny/tiny-gemma3-q8_0.gguf"));
  REQUIRE(m.ok());
  const auto prompt = Prompt((*m)->info().n_vocab);
  const auto whole = Logits(*m, "vulkan", prompt);
  const auto chunked = Logits(*m, "vulkan", prompt, 7);
  CHECK(WorstRelative(whole, chunked, static_cast<size_t>((*m)->info().n_vocab)) <= 1e-5);
}
