// `uaii generate [--model PATH] -p PROMPT [options] [--json]`: a continuation of raw
// text (BOS as the model's metadata says), streamed to stdout as it is produced, then
// a one-line summary on stderr; with --json one document instead (schema:
// docs/json/generate.schema.json). Greedy unless --temp > 0. `--chat` wraps the prompt
// as one user turn in the model's chat template (`uaii chat -p`).
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "args.h"
#include "commands.h"
#include "draft_flags.h"
#include "input_files.h"
#include "storage_report.h"
#include "uaii/generation.h"
#include "uaii/json_writer.h"
#include "uaii/model_locator.h"
#include "uaii/progress_bar.h"
#include "uaii/process_stats.h"
#include "uaii/sampling.h"
#include "uaii/str_cat.h"

namespace uaii::cli {
namespace {

constexpr char kUsage[] =
    "usage: uaii generate [--model PATH] -p PROMPT [--max-tokens N] [--threads N] [--max-context N]\n"
    "                     [--temp T] [--top-k K] [--top-p P] [--min-p P] [--repeat-penalty R]\n"
    "                     [--presence-penalty A] [--frequency-penalty F] [--seed S] [--stop TEXT]...\n"
    "                     [--preset laptop|desktop|server|phone|none|off] [--ram-gb N] [--kv-window N]\n"
    "                     [--moe-top-k K (fewer experts per token: approximate)] [--moe-prefetch on|off]\n"
    "                     [--grammar FILE.gbnf | --json-schema FILE.json] (output follows the grammar)\n"
    "                     [--draft PATH|auto [--draft-max N] [--draft-min N] [--draft-p-min P]\n"
    "                      [--draft-rule auto|exact|rejection]] (speculative decoding; --draft-model, --n-draft: aliases)\n"
    "                     [--device auto|cpu|vulkan[:N] (uaii devices lists them)] [--vram-gb N] [--chat] [--json]\n"
    "       uaii generate [--model PATH] --dry-run [memory flags] [--json]   (the storage plan, no weights read)\n";

// Reads the sampling flags over greedy defaults; --temp > 0 turns on llama.cpp's
// default filters (top-k 40, top-p 0.95, min-p 0.05) unless the flags say otherwise.
absl::StatusOr<sampling::SamplingParams> SamplingFromArgs(const Args& a) {
  sampling::SamplingParams p = sampling::SamplingParams::Greedy();
  auto num = [&](const char* flag, auto* out) -> absl::Status {
    if (!a.has(flag)) return absl::OkStatus();
    if (!ParseNumber(a.get(flag), out))
      return absl::InvalidArgumentError(StrCat(flag, " takes a number, got \"", a.get(flag), "\""));
    return absl::OkStatus();
  };
  if (auto s = num("--temp", &p.temperature); !s.ok()) return s;
  if (p.temperature > 0) {
    const sampling::SamplingParams defaults;
    p.top_k = defaults.top_k;
    p.top_p = defaults.top_p;
    p.min_p = defaults.min_p;
  }
  for (auto s : {num("--top-k", &p.top_k), num("--top-p", &p.top_p), num("--min-p", &p.min_p),
                 num("--repeat-penalty", &p.repeat_penalty), num("--presence-penalty", &p.presence_penalty),
                 num("--frequency-penalty", &p.frequency_penalty), num("--seed", &p.seed)})
    if (!s.ok()) return s;
  if (auto s = sampling::ValidateSamplingParams(p); !s.ok()) return s;
  return p;
}

void PrintJson(const GenerationResult& r, const StorageStats& storage, const DeviceStats& device,
               double decode_io_wait_seconds) {
  JsonWriter w(0);
  w.BeginObject();
  w.Key("text").String(r.text);
  w.Key("tokens").BeginArray();
  for (TokenId id : r.tokens) w.Int(id);
  w.EndArray();
  w.Key("usage").BeginObject();
  w.Key("prompt_tokens").Int(r.prompt_tokens);
  w.Key("completion_tokens").Int(static_cast<int64_t>(r.tokens.size()));
  w.Key("cached_tokens").Int(r.cached_tokens);
  w.Key("reasoning_tokens").Int(0);
  w.Key("draft_tokens").Int(r.draft_tokens);
  w.Key("draft_accepted_tokens").Int(r.draft_accepted);
  w.Key("draft_acceptance_rate").Double(r.draft_acceptance_rate());
  w.EndObject();
  w.Key("timings").BeginObject();
  w.Key("prefill_tokens_per_s").Double(r.prefill_tokens_per_s());
  w.Key("decode_tokens_per_s").Double(r.decode_tokens_per_s());
  w.Key("decode_seconds").Double(r.decode_seconds);
  w.Key("draft_seconds").Double(r.draft_seconds);
  w.EndObject();
  w.Key("memory").BeginObject().Key("peak_rss_bytes").Int(PeakRssBytes());
  WriteStorageMemory(w, storage);
  w.Key("decode_io_wait_seconds").Double(decode_io_wait_seconds);
  w.EndObject();
  w.Key("device").BeginObject().Key("name").String(device.device);
  if (device.device != "cpu") {
    w.Key("budget_bytes").Uint(device.budget_bytes).Key("resident_bytes").Uint(device.resident_bytes);
    w.Key("host_bytes").Uint(device.host_bytes).Key("staging_bytes").Uint(device.staging_bytes);
    w.Key("requantized_weights").Int(device.requantized_weights);
  }
  w.EndObject();
  w.Key("stop_reason").String(StopReasonName(r.stop));
  w.EndObject();
  std::printf("%s\n", w.str().c_str());
}

}  // namespace

const char* const kGenerateUsage = kUsage;

int RunGenerate(int argc, char** argv) {
  std::vector<std::string> storage;
  bool chat = false;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--chat") { chat = true; continue; }
    storage.push_back(a == "-p" ? "--prompt" : a);  // -p is the short form of --prompt
  }
  std::vector<char*> av;
  for (auto& s : storage) av.push_back(s.data());
  if (chat) {
    // One user turn in the model's template: the chat command's scripted mode.
    return RunChat(static_cast<int>(av.size()), av.data());
  }
  auto args = ParseArgs(static_cast<int>(av.size()), av.data(),
                        {.valued = {"--model", "--prompt", "--max-tokens", "--threads", "--max-context", "--temp",
                                    "--top-k", "--top-p", "--min-p", "--repeat-penalty", "--presence-penalty",
                                    "--frequency-penalty", "--seed", "--preset", "--ram-gb", "--kv-window",
                                    "--moe-top-k", "--moe-prefetch", "--device", "--vram-gb", "--grammar", "--json-schema", "--draft",
                                    "--draft-model", "--draft-max", "--n-draft", "--draft-min", "--draft-p-min",
                                    "--draft-rule"},
                         .boolean = {"--json", "--dry-run"},
                         .repeated = {"--stop"}});
  const bool dry_run = args.ok() && args->has("--dry-run");
  if (!args.ok() || !args->positional.empty() || (!args->values.count("--prompt") && !dry_run)) {
    std::fprintf(stderr, "uaii generate: %s\n%s",
                 !args.ok() ? std::string(args.status().message()).c_str()
                 : !args->positional.empty() ? "unexpected argument"
                                             : "missing -p PROMPT",
                 kUsage);
    return 2;
  }
  int64_t max_tokens = 128, threads = 0, max_context = 0;
  if (!ParseNumber(args->get("--max-tokens", "128"), &max_tokens) || max_tokens < 0 ||
      !ParseNumber(args->get("--threads", "0"), &threads) || threads < 0 ||
      !ParseNumber(args->get("--max-context", "0"), &max_context) || max_context < 0) {
    std::fprintf(stderr, "uaii generate: --max-tokens, --threads and --max-context take a non-negative integer\n%s",
                 kUsage);
    return 2;
  }
  auto sampling = SamplingFromArgs(*args);
  if (!sampling.ok()) {
    std::fprintf(stderr, "uaii generate: %s\n%s", std::string(sampling.status().message()).c_str(), kUsage);
    return 2;
  }
  SessionOptions so;
  if (auto st = MemoryOptionsFromArgs(*args, &so); !st.ok()) {
    std::fprintf(stderr, "uaii generate: %s\n%s", std::string(st.message()).c_str(), kUsage);
    return 2;
  }
  const bool json = args->has("--json");
  auto fail = [](const absl::Status& st) {
    std::fprintf(stderr, "uaii generate: %s\n", std::string(st.message()).c_str());
    return 1;
  };
  auto grammar = GrammarFromArgs(*args);
  if (!grammar.ok()) return fail(grammar.status());
  auto path = ResolveModelPath(args->get("--model"));
  if (!path.ok()) return fail(path.status());
  auto model = Model::Load(*path);
  if (!model.ok()) return fail(model.status());
  so.threads = static_cast<int>(threads);
  // Without --max-context: the default (4096, or the model's maximum when smaller),
  // widened to what the prompt and max_tokens need, never past the model's maximum.
  auto context_for = [&](int64_t needed) -> int64_t {
    if (max_context > 0) return max_context;
    const int64_t model_max = (*model)->info().n_ctx_train;
    if (needed <= kDefaultMaxContext) return 0;
    return model_max > 0 ? std::min(needed, model_max) : needed;
  };
  if (dry_run) {
    so.max_context = context_for(max_tokens);
    return PrintDryRun("generate", **model, so, json);
  }
  auto prompt = (*model)->tokenizer().Encode(args->get("--prompt"),
                                             EncodeOptions{.parse_special = false, .add_special = true});
  if (!prompt.ok()) return fail(prompt.status());

  so.max_context = context_for(static_cast<int64_t>(prompt->size()) + max_tokens);
  auto speculative = SpeculativeFromArgs(*args, so, *model);
  if (!speculative.ok()) return fail(speculative.status());
  ProgressBar load_bar("loading " + std::filesystem::path(*path).filename().string(), !(json));
  so.on_load_progress = [&](uint64_t done, uint64_t total) { load_bar.Update(done, total); };
  auto gen = Generator::Create(*model, so, *speculative);
  load_bar.Done("");
  so.on_load_progress = nullptr;
  if (!gen.ok()) return fail(gen.status());
  // Said once, where the user asked for a device: what "auto" fell back from.
  if (args->has("--device") && !(*gen)->session().device_note().empty())
    std::fprintf(stderr, "uaii generate: device: %s\n", (*gen)->session().device_note().c_str());
  GenerationRequest req;
  req.prompt = *std::move(prompt);
  req.max_tokens = max_tokens;
  req.sampling = *sampling;
  req.stop = args->all("--stop");
  req.grammar = *std::move(grammar);
  auto result = (*gen)->Run(req, [&](TokenId, std::string_view text) {
    if (!json && !text.empty()) {
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::fflush(stdout);
    }
    return true;
  });
  if (!result.ok()) return fail(result.status());
  const StorageStats final_stats = (*gen)->session().storage_stats();
  if (json) {
    PrintJson(*result, final_stats, (*gen)->session().device_stats(), result->decode_io_wait_seconds);
  } else {
    std::printf("\n");
    std::fflush(stdout);
  }
  std::fprintf(stderr,
               "uaii generate: prompt %lld tokens, generated %lld tokens (%s), prefill %.1f tok/s, decode %.1f tok/s, "
               "peak RSS %.1f MiB\n",
               (long long)result->prompt_tokens, (long long)result->tokens.size(),
               std::string(StopReasonName(result->stop)).c_str(), result->prefill_tokens_per_s(),
               result->decode_tokens_per_s(), PeakRssBytes() / (1024.0 * 1024.0));
  if (result->draft_tokens > 0)
    std::fprintf(stderr, "uaii generate: draft proposed %lld tokens, %lld kept (%.0f%%), %lld forward passes\n",
                 (long long)result->draft_tokens, (long long)result->draft_accepted,
                 100.0 * result->draft_acceptance_rate(), (long long)result->decode_steps);
  // What this run got refines the next dry run's prediction (docs/storage.md).
  DecodeTimings decode;
  // A speculative run's decode seconds are the draft's and the batches' too: not a step's.
  if (result->draft_tokens == 0) decode.Add(result->decode_steps, result->decode_seconds, result->decode_io_wait_seconds);
  if (const std::string note = RecordRunObservation(*path, **model, so, final_stats, decode, (*gen)->session().device()); !note.empty())
    std::fprintf(stderr, "uaii generate: %s\n", note.c_str());
  if (const StorageStats st = (*gen)->session().storage_stats(); st.bytes_read > 0)
    std::fprintf(stderr, "uaii generate: storage: budget %.1f MiB, streamed %.1f MiB from disk, I/O wait %.2f s, "
                 "compute %.2f s, staging hits %llu, misses %llu\n",
                 st.budget_bytes / (1024.0 * 1024.0), st.bytes_read / (1024.0 * 1024.0), st.io_wait_seconds,
                 st.compute_seconds, (unsigned long long)st.staging_hits, (unsigned long long)st.staging_misses);
  return 0;
}

}  // namespace uaii::cli
