// Shared helpers for the planner tests: tiny fixture paths, a scratch directory,
// and a forward pass of a graph outside Model (to compare fused and unfused graphs).
#pragma once
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>
#include <vector>

#include "formats/gguf_file.h"
#include "models/families.h"
#include "backends/registry.h"
#include "runtime/kv_cache.h"
#include "runtime/weights.h"

namespace uaii::planner::testing {

inline std::string Tiny(const std::string& name) { return std::string(UAII_FIXTURE_DIR) + "/tiny/" + name; }

inline std::vector<int32_t> TinyPrompt() {
  std::ifstream in(Tiny("prompt.txt"));
  return {std::istream_iterator<int32_t>(in), std::istream_iterator<int32_t>()};
}

inline std::string ScratchDir(const std::string& name) {
  auto p = std::filesystem::temp_directory_path() / ("uaii-planner-" + std::to_string(::getpid()) + "-" + name);
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p.string();
}

inline ir::Graph BuiltGraph(const std::string& gguf_path) {
  if (!std::filesystem::exists(gguf_path)) FAIL("missing " << gguf_path << " (run tests/fixtures/make_tiny_models.py)");
  auto f = gguf::File::Open(gguf_path);
  REQUIRE(f.ok());
  auto spec = models::SpecFromGguf(**f);
  REQUIRE(spec.ok());
  auto g = models::BuildGraph(*spec);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  return *g;
}

// Logits of every row of `tokens`, fed in chunks of `chunk`.
inline std::vector<float> Forward(const ir::Graph& g, const std::vector<int32_t>& tokens, int64_t chunk) {
  auto ws = runtime::WeightSet::Bind(g);
  INFO(ws.status().ToString());
  REQUIRE(ws.ok());
  auto ex = backends::Cpu().Compile(g, **ws);
  INFO(ex.status().ToString());
  REQUIRE(ex.ok());
  runtime::KvCache cache((*ex)->kv_layers(), 256);
  std::vector<float> all;
  const int64_t n = static_cast<int64_t>(tokens.size());
  for (int64_t off = 0; off < n; off += chunk) {
    const int64_t T = std::min(chunk, n - off);
    std::vector<int32_t> pos(T);
    std::vector<int64_t> rows(T);
    for (int64_t t = 0; t < T; ++t) pos[t] = static_cast<int32_t>(off + t), rows[t] = t;
    std::vector<float> out;
    auto st = (*ex)->Run(tokens.data() + off, pos.data(), T, rows, cache, backends::RunContext{}, &out);
    INFO(st.ToString());
    REQUIRE(st.ok());
    all.insert(all.end(), out.begin(), out.end());
  }
  return all;
}

}  // namespace uaii::planner::testing
