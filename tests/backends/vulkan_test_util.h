// What the Vulkan suites share: the fixtures' folder, the SKIP rule without a device,
// a model's logits over a prompt and a few decode steps, and the row-relative measure
// the tolerances are stated in.
#pragma once
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "backends/vulkan/vk_device.h"
#include "uaii/model.h"
#include "uaii/session.h"

namespace uaii::vulkan_test {

inline std::string Fixtures(const std::string& sub) { return std::string(UAII_FIXTURE_DIR) + "/" + sub; }

// False, after a SKIP line naming why, where the loader lists no Vulkan device.
inline bool HaveVulkan() {
  auto d = backends::vulkan::ListDevices();
  if (!d.ok()) {
    std::printf("SKIP: no Vulkan device: %s\n", std::string(d.status().message()).c_str());
    return false;
  }
  return true;
}

// Every prompt row's logits (one Eval, prefilled in chunks of o.prefill_chunk), then
// three decode steps'.
inline std::vector<float> EvalThenDecode(const std::shared_ptr<const Model>& m, const SessionOptions& o,
                                         const std::vector<TokenId>& prompt) {
  auto s = Session::Create(m, o);
  INFO(o.device << ": " << s.status().ToString());
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

// Per row of V: max |a - b| over the row's largest |a| (b must be finite).
inline std::vector<double> RowRelative(const std::vector<float>& a, const std::vector<float>& b, size_t V) {
  REQUIRE(a.size() == b.size());
  std::vector<double> rel;
  for (size_t r = 0; r < a.size() / V; ++r) {
    double mag = 0, diff = 0;
    for (size_t i = r * V; i < (r + 1) * V; ++i) {
      REQUIRE(std::isfinite(b[i]));
      mag = std::max(mag, std::fabs(static_cast<double>(a[i])));
      diff = std::max(diff, std::fabs(static_cast<double>(a[i]) - b[i]));
    }
    rel.push_back(diff / std::max(mag, 1e-3));
  }
  return rel;
}

// The worst row's RowRelative.
inline double WorstRelative(const std::vector<float>& a, const std::vector<float>& b, size_t V) {
  const auto rel = RowRelative(a, b, V);
  return rel.empty() ? 0.0 : *std::max_element(rel.begin(), rel.end());
}

}  // namespace uaii::vulkan_test
