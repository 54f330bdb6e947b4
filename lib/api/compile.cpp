// CompileModel (uaii/compile.h): the built graph of a GGUF file or a Hugging Face
// directory (as Model::Load builds it, so both share plan cache entries) or a graph
// file, planned, reported and written.
#include "uaii/compile.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <tuple>

#include "ir/serialize.h"
#include "planner/pipeline.h"
#include "planner/plan_cache.h"
#include "runtime/assemble.h"
#include "uaii/json_writer.h"
#include "uaii/str_cat.h"

namespace uaii {
namespace {

namespace fs = std::filesystem;

// The graph of a GGUF file, read as Model::Load reads it (runtime::ReadGgufModel, so
// both share plan cache entries); `run_meta` gets what a graph file needs to run on
// its own.
absl::StatusOr<ir::Graph> GraphOfGguf(const std::string& path, std::string* content_hash,
                                      std::vector<std::pair<std::string, std::string>>* run_meta) {
  auto read = runtime::ReadGgufModel(path);
  if (!read.ok()) return read.status();
  *content_hash = read->plan_identity;
  auto* m = run_meta;
  m->emplace_back("tokenizer.gguf", path);
  m->emplace_back("context_length", StrCat(read->spec.n_ctx_train));
  m->emplace_back("n_embd", StrCat(read->spec.n_embd));
  m->emplace_back("n_layer", StrCat(read->spec.n_layer));
  if (!read->name.empty()) m->emplace_back("name", read->name);
  m->emplace_back("source.content_hash", *content_hash);
  return std::move(read->graph);
}

// The graph of a Hugging Face directory, as Model::Load builds it (runtime::
// ReadHfDirectory: the weights' views and the plan cache identity are the same);
// the tokenizer is read from the directory ("tokenizer.dir").
absl::StatusOr<ir::Graph> GraphOfHf(const std::string& dir, std::string* content_hash,
                                    std::vector<std::pair<std::string, std::string>>* run_meta) {
  auto read = runtime::ReadHfDirectory(dir);
  if (!read.ok()) return read.status();
  *content_hash = read->plan_identity;
  auto* m = run_meta;
  m->emplace_back("tokenizer.dir", read->model->dir);
  m->emplace_back("context_length", StrCat(read->spec.n_ctx_train));
  m->emplace_back("n_embd", StrCat(read->spec.n_embd));
  m->emplace_back("n_layer", StrCat(read->spec.n_layer));
  m->emplace_back("source.content_hash", *content_hash);
  return std::move(read->graph);
}

// Rewrites file paths (weights and their views' parts, tokenizer) relative to
// `out_dir`, or absolute.
void RebasePaths(ir::Graph& g, const fs::path& from_dir, const fs::path& out_dir, bool absolute) {
  auto rebase = [&](std::string& p) {
    fs::path abs = fs::path(p).is_absolute() ? fs::path(p) : (from_dir / p).lexically_normal();
    p = absolute ? abs.string() : abs.lexically_relative(out_dir).string();
  };
  auto rebase_ref = [&](auto& self, ir::TensorRef& r) -> void {
    if (!r.file.empty()) rebase(r.file);  // synthetic views and concats name no file
    if (r.view)
      for (auto& p : r.view->parts) self(self, p);
  };
  for (auto& t : g.tensors)
    if (t.weight) rebase_ref(rebase_ref, *t.weight);
  for (auto& [k, v] : g.metadata)
    if (k == "tokenizer.gguf" || k == "tokenizer.dir") rebase(v);
}

std::string MiB(uint64_t b) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3f", static_cast<double>(b) / (1024.0 * 1024.0));
  return buf;
}

void ReportPlan(const planner::Plan& fused, const planner::Plan& unfused, double plan_seconds, CompileResult* r) {
  {
    JsonWriter w(0);
    w.BeginObject();
    w.Key("passes").BeginArray();
    for (const auto& p : fused.passes) w.String(p);
    w.EndArray();
    w.Key("ops").Int(static_cast<int64_t>(fused.graph.ops.size()));
    w.Key("ops_unfused").Int(static_cast<int64_t>(unfused.graph.ops.size()));
    for (auto [name, f, u] : {std::tuple{"decode", &fused.decode, &unfused.decode},
                              std::tuple{"prefill", &fused.prefill, &unfused.prefill}}) {
      w.Key(name).BeginObject();
      w.Key("tokens").Int(f->tokens);
      w.Key("peak_activation_bytes").Uint(f->peak_live_bytes);
      w.Key("arena_bytes").Uint(f->arena_bytes);
      w.Key("no_reuse_bytes").Uint(f->no_reuse_bytes);
      w.Key("unfused_peak_activation_bytes").Uint(u->peak_live_bytes);
      w.Key("unfused_arena_bytes").Uint(u->arena_bytes);
      w.EndObject();
    }
    w.Key("storage_plan").String(fused.storage.empty() ? "undecided" : fused.storage);
    w.Key("from_cache").Bool(fused.from_cache);
    w.Key("plan_seconds").Double(plan_seconds);
    w.EndObject();
    r->plan_json = w.str();
  }
  std::string& t = r->plan_text;
  t += StrCat("passes:", fused.passes.empty() ? " (none)" : "", "\n");
  for (const auto& p : fused.passes) t += StrCat("  ", p, "\n");
  t += StrCat("ops: ", fused.graph.ops.size(), " (unfused ", unfused.graph.ops.size(), ")\n");
  for (auto [name, f, u] : {std::tuple{"decode ", &fused.decode, &unfused.decode},
                            std::tuple{"prefill", &fused.prefill, &unfused.prefill}}) {
    char line[256];
    std::snprintf(line, sizeof line,
                  "%s T=%-4lld peak activation %s MiB, arena %s MiB, without reuse %s MiB "
                  "(unfused: peak %s MiB, arena %s MiB)\n",
                  name, (long long)f->tokens, MiB(f->peak_live_bytes).c_str(), MiB(f->arena_bytes).c_str(),
                  MiB(f->no_reuse_bytes).c_str(), MiB(u->peak_live_bytes).c_str(), MiB(u->arena_bytes).c_str());
    t += line;
  }
  t += StrCat("storage plan: ", fused.storage.empty() ? "undecided (weights resident)" : fused.storage, "\n");
  char line[64];
  std::snprintf(line, sizeof line, "%.3f", plan_seconds * 1e3);
  t += StrCat("plan: ", fused.from_cache ? "from cache" : "computed", " in ", line, " ms\n");
}

void Figures(const planner::MemoryPlan& f, const planner::MemoryPlan& u, StepMemory* m) {
  m->tokens = f.tokens;
  m->peak_activation_bytes = f.peak_live_bytes;
  m->arena_bytes = f.arena_bytes;
  m->no_reuse_bytes = f.no_reuse_bytes;
  m->unfused_peak_activation_bytes = u.peak_live_bytes;
  m->unfused_arena_bytes = u.arena_bytes;
}

}  // namespace

bool IsGraphFilePath(std::string_view path) { return ir::IsGraphPath(path); }

absl::StatusOr<CompileResult> CompileModel(const std::string& model_path, const CompileOptions& options) {
  if (!options.output.empty() && !ir::IsGraphPath(options.output))
    return absl::InvalidArgumentError(StrCat("output '", options.output, "' must end in .uaii or .uaii.json"));
  if (options.prefill_tokens <= 0)
    return absl::InvalidArgumentError(StrCat("prefill_tokens ", options.prefill_tokens, " is not positive"));
  planner::PlanOptions opts;
  opts.fuse = options.fuse;
  opts.prefill_tokens = options.prefill_tokens;
  ir::Graph graph;
  std::vector<std::pair<std::string, std::string>> run_meta;
  std::string content_hash = "graph-file";
  fs::path from_dir = fs::current_path();
  if (ir::IsGraphPath(model_path)) {
    auto g = ir::ReadGraphFile(model_path);
    if (!g.ok()) return g.status();
    graph = std::move(*g);
    from_dir = fs::absolute(model_path).parent_path();
  } else {
    auto g = fs::is_directory(model_path) ? GraphOfHf(model_path, &content_hash, &run_meta)
                                          : GraphOfGguf(model_path, &content_hash, &run_meta);
    if (!g.ok()) return g.status();
    graph = std::move(*g);
  }
  CompileResult r;
  auto t0 = std::chrono::steady_clock::now();
  auto plan = planner::PlanWithCache(graph, content_hash, opts, planner::DefaultPlanCacheDir());
  r.plan_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!plan.ok()) return plan.status();
  r.passes = plan->passes;
  r.ops = static_cast<int64_t>(plan->graph.ops.size());
  r.storage_plan = plan->storage;
  r.from_cache = plan->from_cache;
  if (options.report_plan) {
    planner::PlanOptions plain = opts;
    plain.fuse = false;
    auto unfused = planner::RunPasses(graph, plain);
    if (!unfused.ok()) return unfused.status();
    // A cached plan carries figures only; recompute to show buffers consistently.
    r.ops_unfused = static_cast<int64_t>(unfused->graph.ops.size());
    Figures(plan->decode, unfused->decode, &r.decode);
    Figures(plan->prefill, unfused->prefill, &r.prefill);
    ReportPlan(*plan, *unfused, r.plan_seconds, &r);
  }
  if (!options.output.empty()) {
    ir::Graph g = options.write_fused ? plan->graph : graph;
    g.metadata.insert(g.metadata.end(), run_meta.begin(), run_meta.end());
    const fs::path out_dir = fs::absolute(options.output).parent_path();
    RebasePaths(g, from_dir, out_dir, options.absolute_paths);
    if (auto st = ir::WriteGraphFile(g, options.output); !st.ok()) return st;
    r.written_tensors = static_cast<int64_t>(g.tensors.size());
    r.written_ops = static_cast<int64_t>(g.ops.size());
  }
  return r;
}

}  // namespace uaii
