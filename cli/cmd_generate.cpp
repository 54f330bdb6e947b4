// `uaii generate [--model PATH] -p PROMPT [--max-tokens N] [--threads N] [--json]`:
// greedy continuation of raw text (BOS added as the model's metadata says). Text
// streams to stdout as it is produced, then one summary line goes to stderr. With
// --json, one JSON document (schema: docs/json/generate.schema.json) instead.
#include <sys/resource.h>

#include <charconv>
#include <cstdio>
#include <string>

#include "args.h"
#include "commands.h"
#include "loaders/model_locator.h"
#include "uaii/session.h"
#include "util/json_writer.h"
#include "util/str_cat.h"

namespace uaii::cli {
namespace {

constexpr char kUsage[] =
    "usage: uaii generate [--model PATH] -p PROMPT [--max-tokens N] [--threads N] [--json]\n";

int64_t PeakRssBytes() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<int64_t>(ru.ru_maxrss) * 1024;  // Linux reports KiB
}

bool ParseInt(const std::string& s, int64_t* v) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), *v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

double Rate(int64_t n, double seconds) { return seconds > 0 ? static_cast<double>(n) / seconds : 0.0; }

}  // namespace

int RunGenerate(int argc, char** argv) {
  // -p is the short form of --prompt.
  std::vector<std::string> storage;
  std::vector<char*> av;
  for (int i = 0; i < argc; ++i) {
    storage.push_back(std::string(argv[i]) == "-p" ? "--prompt" : argv[i]);
  }
  for (auto& s : storage) av.push_back(s.data());
  auto args = ParseArgs(static_cast<int>(av.size()), av.data(),
                        {.valued = {"--model", "--prompt", "--max-tokens", "--threads"}, .boolean = {"--json"}});
  if (!args.ok() || !args->positional.empty() || !args->values.count("--prompt")) {
    std::fprintf(stderr, "uaii generate: %s\n%s",
                 !args.ok() ? std::string(args.status().message()).c_str()
                 : !args->positional.empty() ? "unexpected argument"
                                             : "missing -p PROMPT",
                 kUsage);
    return 2;
  }
  int64_t max_tokens = 128, threads = 0;
  if (!ParseInt(args->get("--max-tokens", "128"), &max_tokens) || max_tokens < 0 ||
      !ParseInt(args->get("--threads", "0"), &threads) || threads < 0) {
    std::fprintf(stderr, "uaii generate: --max-tokens and --threads take a non-negative integer\n%s", kUsage);
    return 2;
  }
  const bool json = args->has("--json");
  auto fail = [](const absl::Status& st) {
    std::fprintf(stderr, "uaii generate: %s\n", std::string(st.message()).c_str());
    return 1;
  };
  auto path = ResolveModelPath(args->get("--model"));
  if (!path.ok()) return fail(path.status());
  auto model = Model::Load(*path);
  if (!model.ok()) return fail(model.status());
  const Tokenizer& tok = (*model)->tokenizer();
  auto prompt = tok.Encode(args->get("--prompt"), EncodeOptions{.parse_special = false, .add_special = true});
  if (!prompt.ok()) return fail(prompt.status());
  if (prompt->empty()) return fail(absl::InvalidArgumentError("the prompt encodes to no tokens"));

  SessionOptions so;
  so.threads = static_cast<int>(threads);
  so.max_context = std::max<int64_t>(4096, static_cast<int64_t>(prompt->size()) + max_tokens);
  auto session = Session::Create(*model, so);
  if (!session.ok()) return fail(session.status());

  StreamDecoder decoder(tok);
  std::string text;
  auto on_token = [&](TokenId id) {
    std::string piece = decoder.Push(id);
    text += piece;
    if (!json && !piece.empty()) {
      std::fwrite(piece.data(), 1, piece.size(), stdout);
      std::fflush(stdout);
    }
    return true;
  };
  auto result = GenerateGreedy(**session, *prompt, GenerateOptions{.max_tokens = max_tokens}, on_token);
  if (!result.ok()) return fail(result.status());
  std::string tail = decoder.Flush();
  text += tail;
  const double prefill_tps = Rate(result->prompt_tokens, result->prefill_seconds);
  // Decode steps: every generated token after the first came from one Decode call.
  const int64_t n_gen = static_cast<int64_t>(result->tokens.size());
  const double decode_tps = Rate(std::max<int64_t>(n_gen - 1, 0), result->decode_seconds);
  const std::string stop = result->stop == StopReason::kEndOfGeneration ? "eos"
                           : result->stop == StopReason::kContextFull  ? "context_full"
                                                                       : "max_tokens";
  const int64_t rss = PeakRssBytes();
  if (json) {
    JsonWriter w(0);
    w.BeginObject();
    w.Key("text").String(text);
    w.Key("tokens").BeginArray();
    for (TokenId id : result->tokens) w.Int(id);
    w.EndArray();
    w.Key("usage").BeginObject();
    w.Key("prompt_tokens").Int(result->prompt_tokens);
    w.Key("completion_tokens").Int(n_gen);
    w.Key("cached_tokens").Int(0);
    w.Key("reasoning_tokens").Int(0);
    w.EndObject();
    w.Key("timings").BeginObject();
    w.Key("prefill_tokens_per_s").Double(prefill_tps);
    w.Key("decode_tokens_per_s").Double(decode_tps);
    w.EndObject();
    w.Key("memory").BeginObject().Key("peak_rss_bytes").Int(rss).EndObject();
    w.Key("stop_reason").String(stop);
    w.EndObject();
    std::printf("%s\n", w.str().c_str());
  } else {
    if (!tail.empty()) std::fwrite(tail.data(), 1, tail.size(), stdout);
    std::printf("\n");
    std::fflush(stdout);
  }
  std::fprintf(stderr,
               "uaii generate: prompt %lld tokens, generated %lld tokens (%s), prefill %.1f tok/s, decode %.1f tok/s, "
               "peak RSS %.1f MiB\n",
               (long long)result->prompt_tokens, (long long)n_gen, stop.c_str(), prefill_tps, decode_tps,
               rss / (1024.0 * 1024.0));
  return 0;
}

}  // namespace uaii::cli
