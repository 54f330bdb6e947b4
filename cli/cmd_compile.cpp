// `uaii compile [--model] MODEL [-o OUT.uaii | OUT.uaii.json] [--absolute] [--fused]
//  [--plan] [--no-fuse] [--prefill-tokens N] [--json]`
//
// Writes a model's forward graph as a graph file (docs/ir.md, "Graph files"): MODEL is
// a GGUF file, a Hugging Face directory or a graph file (which converts between the
// binary and JSON forms). Weights stay `file#tensor` references into the GGUF or the
// safetensors files (with their declared views), relative to the output's directory
// (or absolute with --absolute); metadata names the tokenizer source and the
// hyper-parameters the runtime reads. --fused writes the planned graph instead of the
// built one (the runtime plans either at load). --plan prints the plan: the passes and
// the activation memory plan (peak live bytes, arena bytes, bytes without reuse) for
// decode (T = 1) and prefill (T = --prefill-tokens), fused and unfused.
#include <cstdio>
#include <cstdlib>

#include "args.h"
#include "commands.h"
#include "uaii/compile.h"
#include "uaii/model_locator.h"

namespace uaii::cli {
namespace {

constexpr char kUsage[] =
    "usage: uaii compile [--model] MODEL [-o OUT.uaii|OUT.uaii.json] [--absolute] [--fused]\n"
    "                    [--plan] [--no-fuse] [--prefill-tokens N] [--json]\n";

}  // namespace

const char* const kCompileUsage = kUsage;

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
  CompileOptions opts;
  opts.output = args->get("--output");
  if (!opts.output.empty() && !IsGraphFilePath(opts.output)) {
    std::fprintf(stderr, "uaii compile: output '%s' must end in .uaii or .uaii.json\n%s", opts.output.c_str(), kUsage);
    return 2;
  }
  opts.fuse = !args->has("--no-fuse");
  if (args->has("--prefill-tokens")) {
    opts.prefill_tokens = std::atoll(args->get("--prefill-tokens").c_str());
    if (opts.prefill_tokens <= 0) {
      std::fprintf(stderr, "uaii compile: --prefill-tokens takes a positive integer\n%s", kUsage);
      return 2;
    }
  }
  opts.absolute_paths = args->has("--absolute");
  opts.write_fused = args->has("--fused");
  opts.report_plan = args->has("--plan");
  auto path = ResolveModelPath(args->positional.empty() ? args->get("--model") : args->positional[0]);
  if (!path.ok()) return fail(path.status());
  auto r = CompileModel(*path, opts);
  if (!r.ok()) return fail(r.status());
  if (opts.report_plan) {
    if (args->has("--json"))
      std::printf("%s\n", r->plan_json.c_str());
    else
      std::fputs(r->plan_text.c_str(), stdout);
  }
  if (!opts.output.empty() && (!args->has("--json") || !args->has("--plan")))
    std::fprintf(stderr, "uaii compile: wrote %s (%lld tensors, %lld ops)\n", opts.output.c_str(),
                 (long long)r->written_tensors, (long long)r->written_ops);
  return 0;
}

}  // namespace uaii::cli
