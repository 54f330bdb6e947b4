// `uaii compile [--model] MODEL [-o OUT.uaii | OUT.uaii.json] [--absolute] [--fused]
//  [--plan] [--no-fuse] [--prefill-tokens N] [--json]`
//
// Writes a model's forward graph as a graph file (docs/ir.md, "Graph files"): weights
// stay `file#tensor` references into the GGUF, relative to the output's directory
// (or absolute with --absolute); metadata names the tokenizer source and the
// hyper-parameters the runtime reads. MODEL may also be a graph file, which converts
// between the binary and JSON forms. --fused writes the planned graph instead of the
// built one (the runtime plans either at load). --plan prints the plan: the passes and
// the activation memory plan (peak live bytes, arena bytes, bytes without reuse) for
// decode (T = 1) and prefill (T = --prefill-tokens), fused and unfused.
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "args.h"
#include "commands.h"
#include "formats/gguf_file.h"
#include "ir/serialize.h"
#include "loaders/model_locator.h"
#include "models/families.h"
#include "models/spec.h"
#include "planner/content_hash.h"
#include "planner/pipeline.h"
#include "planner/plan_cache.h"
#include "util/json_writer.h"
#include "util/str_cat.h"

namespace uaii::cli {
namespace {

namespace fs = std::filesystem;

constexpr char kUsage[] =
    "usage: uaii compile [--model] MODEL [-o OUT.uaii|OUT.uaii.json] [--absolute] [--fused]\n"
    "                    [--plan] [--no-fuse] [--prefill-tokens N] [--json]\n";

// The graph of a GGUF file, exactly as Model::Load builds it (so both share plan cache
// entries); `run_meta` gets what a graph file needs to run on its own.
absl::StatusOr<ir::Graph> GraphOfGguf(const std::string& path, std::string* content_hash,
                                      std::vector<std::pair<std::string, std::string>>* run_meta) {
  auto file = gguf::File::Open(path);
  if (!file.ok()) return file.status();
  auto spec = models::SpecFromGguf(**file);
  if (!spec.ok()) return spec.status();
  auto g = models::BuildGraph(*spec);
  if (!g.ok()) return g.status();
  *content_hash = planner::GgufContentHash(**file);
  auto* m = run_meta;
  m->emplace_back("tokenizer.gguf", path);
  m->emplace_back("context_length", StrCat(spec->n_ctx_train));
  m->emplace_back("n_embd", StrCat(spec->n_embd));
  m->emplace_back("n_layer", StrCat(spec->n_layer));
  if ((*file)->Find("general.name"))
    if (auto n = (*file)->GetString("general.name"); n.ok()) m->emplace_back("name", std::string(*n));
  m->emplace_back("source.content_hash", *content_hash);
  return g;
}

// Rewrites file paths (weights, tokenizer) relative to `out_dir`, or absolute.
void RebasePaths(ir::Graph& g, const fs::path& from_dir, const fs::path& out_dir, bool absolute) {
  auto rebase = [&](std::string& p) {
    fs::path abs = fs::path(p).is_absolute() ? fs::path(p) : (from_dir / p).lexically_normal();
    p = absolute ? abs.string() : abs.lexically_relative(out_dir).string();
  };
  for (auto& t : g.tensors)
    if (t.weight) rebase(t.weight->file);
  for (auto& [k, v] : g.metadata)
    if (k == "tokenizer.gguf") rebase(v);
}

std::string MiB(uint64_t b) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3f", static_cast<double>(b) / (1024.0 * 1024.0));
  return buf;
}

void PrintPlan(const planner::Plan& fused, const planner::Plan& unfused, double plan_seconds, bool json) {
  if (json) {
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
    std::printf("%s\n", w.str().c_str());
    return;
  }
  std::printf("passes:%s\n", fused.passes.empty() ? " (none)" : "");
  for (const auto& p : fused.passes) std::printf("  %s\n", p.c_str());
  std::printf("ops: %zu (unfused %zu)\n", fused.graph.ops.size(), unfused.graph.ops.size());
  for (auto [name, f, u] : {std::tuple{"decode ", &fused.decode, &unfused.decode},
                            std::tuple{"prefill", &fused.prefill, &unfused.prefill}})
    std::printf("%s T=%-4lld peak activation %s MiB, arena %s MiB, without reuse %s MiB "
                "(unfused: peak %s MiB, arena %s MiB)\n",
                name, (long long)f->tokens, MiB(f->peak_live_bytes).c_str(), MiB(f->arena_bytes).c_str(),
                MiB(f->no_reuse_bytes).c_str(), MiB(u->peak_live_bytes).c_str(), MiB(u->arena_bytes).c_str());
  std::printf("storage plan: %s\n", fused.storage.empty() ? "undecided (weights resident)" : fused.storage.c_str());
  std::printf("plan: %s in %.3f ms\n", fused.from_cache ? "from cache" : "computed", plan_seconds * 1e3);
}

}  // namespace

int RunCompile(int argc, char** argv) {
  std::vector<std::string> storage;
  for (int i = 0; i < argc; ++i) storage.push_back(std::string(argv[i]) == "-o" ? "--output" : argv[i]);
  std::vector<char*> av;
  for (auto& s : storage) av.push_back(s.data());
  auto args = ParseArgs(static_cast<int>(av.size()), av.data(),
                        {.valued = {"--model", "--output", "--prefill-tokens"},
                         .boolean = {"--absolute", "--fused", "--plan", "--no-fuse", "--json"}});
  if (!args.ok() || args->positional.size() > 1 || (args->positional.size() == 1 && args->has("--model")) ||
      (!args->has("--output") && !args->has("--plan"))) {
    std::fprintf(stderr, "uaii compile: %s\n%s",
                 !args.ok() ? std::string(args.status().message()).c_str()
                 : args->positional.size() > 1 || args->has("--model") ? "name the model once"
                                                                      : "nothing to do: give -o OUT or --plan",
                 kUsage);
    return 2;
  }
  auto fail = [](const absl::Status& st) {
    std::fprintf(stderr, "uaii compile: %s\n", std::string(st.message()).c_str());
    return 1;
  };
  const std::string out = args->get("--output");
  if (!out.empty() && !ir::IsGraphPath(out)) {
    std::fprintf(stderr, "uaii compile: output '%s' must end in .uaii or .uaii.json\n%s", out.c_str(), kUsage);
    return 2;
  }
  planner::PlanOptions opts;
  opts.fuse = !args->has("--no-fuse");
  if (args->has("--prefill-tokens")) {
    opts.prefill_tokens = std::atoll(args->get("--prefill-tokens").c_str());
    if (opts.prefill_tokens <= 0) {
      std::fprintf(stderr, "uaii compile: --prefill-tokens takes a positive integer\n%s", kUsage);
      return 2;
    }
  }
  auto path = ResolveModelPath(args->positional.empty() ? args->get("--model") : args->positional[0]);
  if (!path.ok()) return fail(path.status());
  ir::Graph graph;
  std::vector<std::pair<std::string, std::string>> run_meta;
  std::string content_hash = "graph-file";
  fs::path from_dir = fs::current_path();
  if (ir::IsGraphPath(*path)) {
    auto g = ir::ReadGraphFile(*path);
    if (!g.ok()) return fail(g.status());
    graph = std::move(*g);
    from_dir = fs::absolute(*path).parent_path();
  } else {
    if (fs::is_directory(*path))
      return fail(absl::UnimplementedError(StrCat(*path, ": compile reads GGUF files and graph files; ",
                                                  "Hugging Face directories are not compiled yet")));
    auto g = GraphOfGguf(*path, &content_hash, &run_meta);
    if (!g.ok()) return fail(g.status());
    graph = std::move(*g);
  }
  auto t0 = std::chrono::steady_clock::now();
  auto plan = planner::PlanWithCache(graph, content_hash, opts, planner::DefaultPlanCacheDir());
  const double plan_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!plan.ok()) return fail(plan.status());
  if (args->has("--plan")) {
    planner::PlanOptions plain = opts;
    plain.fuse = false;
    auto unfused = planner::RunPasses(graph, plain);
    if (!unfused.ok()) return fail(unfused.status());
    // A cached plan carries figures only; recompute to show buffers consistently.
    PrintPlan(*plan, *unfused, plan_seconds, args->has("--json"));
  }
  if (!out.empty()) {
    ir::Graph g = args->has("--fused") ? plan->graph : graph;
    g.metadata.insert(g.metadata.end(), run_meta.begin(), run_meta.end());
    const fs::path out_dir = fs::absolute(out).parent_path();
    RebasePaths(g, from_dir, out_dir, args->has("--absolute"));
    if (auto st = ir::WriteGraphFile(g, out); !st.ok()) return fail(st);
    if (!args->has("--json") || !args->has("--plan"))
      std::fprintf(stderr, "uaii compile: wrote %s (%zu tensors, %zu ops)\n", out.c_str(), g.tensors.size(),
                   g.ops.size());
  }
  return 0;
}

}  // namespace uaii::cli
