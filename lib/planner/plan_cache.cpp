#include "planner/plan_cache.h"

#include <cstdlib>
#include <filesystem>

#include "ir/serialize.h"
#include "ir/validate.h"
#include "planner/content_hash.h"
#include "planner/pipeline.h"
#include "util/str_cat.h"

namespace uaii::planner {
namespace {

constexpr char kPrefix[] = "plan.";

std::string Figures(const MemoryPlan& m) {
  return StrCat(m.tokens, ",", m.rows, ",", m.peak_live_bytes, ",", m.arena_bytes, ",", m.no_reuse_bytes);
}

bool ParseFigures(std::string_view s, MemoryPlan* m) {
  uint64_t v[5];
  for (int i = 0; i < 5; ++i) {
    size_t comma = s.find(',');
    std::string part(s.substr(0, comma));
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos) return false;
    v[i] = std::strtoull(part.c_str(), nullptr, 10);
    if ((comma == std::string_view::npos) != (i == 4)) return false;
    if (comma != std::string_view::npos) s.remove_prefix(comma + 1);
  }
  m->tokens = static_cast<int64_t>(v[0]);
  m->rows = static_cast<int64_t>(v[1]);
  m->peak_live_bytes = v[2];
  m->arena_bytes = v[3];
  m->no_reuse_bytes = v[4];
  return true;
}

std::optional<Plan> Read(const std::string& path, const std::string& key) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  auto g = ir::ReadGraphFile(path);
  if (!g.ok() || g->Meta("plan.key") != key || !ir::Validate(*g).ok()) return std::nullopt;
  Plan p;
  p.from_cache = true;
  p.cache_key = key;
  bool ok = ParseFigures(g->Meta("plan.memory.decode"), &p.decode) &&
            ParseFigures(g->Meta("plan.memory.prefill"), &p.prefill);
  if (!ok) return std::nullopt;
  p.storage = std::string(g->Meta("plan.storage"));
  for (const auto& [k, v] : g->metadata)
    if (k == "plan.pass") p.passes.push_back(v);
  std::erase_if(g->metadata, [](const auto& kv) { return kv.first.rfind(kPrefix, 0) == 0; });
  p.graph = std::move(*g);
  return p;
}

absl::Status Write(const std::string& dir, const std::string& path, const Plan& p) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::PermissionDeniedError(StrCat(dir, ": cannot create the plan cache directory"));
  ir::Graph g = p.graph;
  g.metadata.emplace_back("plan.key", p.cache_key);
  for (const auto& pass : p.passes) g.metadata.emplace_back("plan.pass", pass);
  g.metadata.emplace_back("plan.memory.decode", Figures(p.decode));
  g.metadata.emplace_back("plan.memory.prefill", Figures(p.prefill));
  if (!p.storage.empty()) g.metadata.emplace_back("plan.storage", p.storage);
  return ir::WriteGraphFile(g, path);
}

}  // namespace

std::string DefaultPlanCacheDir() {
  if (const char* d = std::getenv("UAII_PLAN_CACHE")) {
    std::string s = d;
    if (s == "off" || s == "0") return "";
    if (!s.empty()) return s;
  }
  if (const char* h = std::getenv("UAII_HOME"); h && *h) return StrCat(h, "/plans");
  if (const char* home = std::getenv("HOME"); home && *home) return StrCat(home, "/.cache/uaii/plans");
  return "";
}

std::string PlanKey(const std::string& content_hash, const ir::Graph& built, const PlanOptions& options) {
  auto bin = ir::ToBinary(built);
  std::string graph_hash = bin.ok() ? Sha256Hex(*bin) : "unserializable";
  return Sha256Hex(StrCat("uaii-plan;version=", kPlannerVersion, ";ir=", ir::kFormatVersion, ";model=",
                          content_hash, ";graph=", graph_hash, ";", options.Key()));
}

absl::StatusOr<Plan> PlanWithCache(const ir::Graph& built, const std::string& content_hash,
                                   const PlanOptions& options, const std::string& dir) {
  const std::string key = PlanKey(content_hash, built, options);
  const std::string path = StrCat(dir, "/", key, ".uaii");
  if (!dir.empty())
    if (auto hit = Read(path, key)) return *std::move(hit);
  auto plan = RunPasses(built, options);
  if (!plan.ok()) return plan.status();
  plan->cache_key = key;
  if (!dir.empty()) (void)Write(dir, path, *plan);  // the cache only saves time: a failed write is a miss later
  return plan;
}

}  // namespace uaii::planner
