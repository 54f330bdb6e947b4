// `uaii pull org/model [--revision R] [--include PATTERN]... --outdir DIR [--json]`
// `uaii pull org/model --dry-run [--preset laptop|desktop|server|phone|none] [--json]`
// Downloads a Hugging Face repository (HF_ENDPOINT, HF_TOKEN honoured), or, with
// --dry-run, reads only config.json and the safetensors headers and says whether the
// model is supported and fits the preset. Exit: 0 ok (dry run: supported and fits),
// 1 error (dry run: unsupported or too large), 2 usage.
#include <cstdio>
#include <cstdlib>

#include "args.h"
#include "commands.h"
#include "uaii/hub.h"
#include "uaii/json_writer.h"

namespace uaii::cli {
namespace {

constexpr const char* kUsage =
    "usage: uaii pull ORG/MODEL [--revision R] [--include PATTERN]... --outdir DIR [--json]\n"
    "       uaii pull ORG/MODEL --dry-run [--preset laptop|desktop|server|phone|none] [--json]\n"
    "environment: HF_ENDPOINT (default https://huggingface.co), HF_TOKEN (gated/private repositories)\n";

std::string Gib(uint64_t b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(b) / (1ull << 30));
  return buf;
}

void PrintDryRun(const hub::PullOptions& o, const hub::DryRunReport& r, bool json) {
  if (json) {
    JsonWriter w(2);
    w.BeginObject();
    w.Key("repo").String(o.repo).Key("revision").String(o.revision).Key("commit").String(r.commit);
    w.Key("dry_run").Bool(true);
    w.Key("files").Uint(r.files).Key("download_bytes").Uint(r.download_bytes);
    w.Key("header_bytes_read").Uint(r.header_bytes_read);
    w.Key("weight_files").BeginArray();
    for (const auto& f : r.weight_files) w.String(f);
    w.EndArray();
    w.Key("supported").Bool(r.supported).Key("family").String(r.family).Key("variant").String(r.variant);
    w.Key("reason").String(r.reason);
    w.Key("preset").String(r.preset);
    w.Key("estimate").BeginObject();
    w.Key("weight_bytes").Uint(r.fit.weight_bytes).Key("kv_bytes").Uint(r.fit.kv_bytes);
    w.Key("kv_window").Int(r.fit.kv_window).Key("total_bytes").Uint(r.fit.total_bytes);
    w.Key("budget_bytes").Uint(r.fit.budget_bytes).Key("fits").Bool(r.fit.fits);
    w.EndObject();
    w.EndObject();
    std::printf("%s\n", w.str().c_str());
    return;
  }
  std::printf("repository:  %s @ %s%s%s\n", o.repo.c_str(), o.revision.c_str(), r.commit.empty() ? "" : " commit ",
              r.commit.c_str());
  std::printf("files:       %llu selected, %s to download\n", (unsigned long long)r.files, Gib(r.download_bytes).c_str());
  std::printf("weights:     %zu safetensors file(s); read %llu header bytes only\n", r.weight_files.size(),
              (unsigned long long)r.header_bytes_read);
  if (r.supported)
    std::printf("family:      %s (variant %s): supported\n", r.family.c_str(), r.variant.c_str());
  else
    std::printf("family:      %s: NOT supported: %s\n", r.family.empty() ? "?" : r.family.c_str(), r.reason.c_str());
  std::printf("preset:      %s (budget %s, KV window %lld)\n", r.preset.c_str(),
              r.fit.budget_bytes ? Gib(r.fit.budget_bytes).c_str() : "unlimited", (long long)r.fit.kv_window);
  std::printf("estimate:    weights %s + KV %s = %s: %s\n", Gib(r.fit.weight_bytes).c_str(), Gib(r.fit.kv_bytes).c_str(),
              Gib(r.fit.total_bytes).c_str(),
              r.fit.fits ? "fits" : "does NOT fit (a bigger preset, or a smaller quantization as GGUF)");
}

}  // namespace

const char* const kPullUsage = kUsage;

int RunPull(int argc, char** argv) {
  auto args = ParseArgs(argc, argv,
                        {.valued = {"--revision", "--include", "--outdir", "--preset"},
                         .boolean = {"--dry-run", "--json", "--quiet"},
                         .repeated = {"--include"}});
  if (!args.ok() || args->positional.size() != 1) {
    std::fprintf(stderr, "uaii pull: %s\n%s",
                 !args.ok() ? std::string(args.status().message()).c_str()
                            : args->positional.empty() ? "missing repository id" : "too many arguments",
                 kUsage);
    return 2;
  }
  hub::PullOptions o;
  o.repo = args->positional[0];
  o.revision = args->get("--revision", "main");
  o.includes = args->all("--include");
  o.outdir = args->get("--outdir");
  o.preset = args->get("--preset", "laptop");
  o.progress = !args->has("--quiet") && !args->has("--json");  // --json: stdout and stderr stay plain
  if (const char* e = std::getenv("HF_ENDPOINT"); e && *e) o.endpoint = e;
  if (const char* t = std::getenv("HF_TOKEN"); t && *t) o.token = t;
  const bool json = args->has("--json");
  if (args->has("--dry-run")) {
    auto rep = hub::DryRun(o);
    if (!rep.ok()) {
      std::fprintf(stderr, "uaii pull: %s\n", std::string(rep.status().message()).c_str());
      return 1;
    }
    PrintDryRun(o, *rep, json);
    return rep->supported && rep->fit.fits ? 0 : 1;
  }
  if (o.outdir.empty()) {
    std::fprintf(stderr, "uaii pull: --outdir is required (or --dry-run)\n%s", kUsage);
    return 2;
  }
  auto res = hub::Pull(o);
  if (!res.ok()) {
    std::fprintf(stderr, "uaii pull: %s\n", std::string(res.status().message()).c_str());
    return 1;
  }
  if (json) {
    JsonWriter w(2);
    w.BeginObject();
    w.Key("repo").String(o.repo).Key("revision").String(o.revision).Key("commit").String(res->commit);
    w.Key("dry_run").Bool(false).Key("outdir").String(o.outdir);
    w.Key("downloaded").BeginArray();
    for (const auto& f : res->files) {
      w.BeginObject().Key("path").String(f.path).Key("bytes").Uint(f.bytes).Key("sha256").String(f.sha256);
      w.Key("already_present").Bool(f.already_present).Key("attempts").Int(f.attempts).EndObject();
    }
    w.EndArray();
    w.EndObject();
    std::printf("%s\n", w.str().c_str());
  } else {
    uint64_t total = 0;
    for (const auto& f : res->files) total += f.bytes;
    std::printf("pulled %s@%s into %s: %zu files, %s\n", o.repo.c_str(), o.revision.c_str(), o.outdir.c_str(),
                res->files.size(), Gib(total).c_str());
  }
  return 0;
}

}  // namespace uaii::cli
