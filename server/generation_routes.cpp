// POST /v1/chat/completions and /v1/completions: a request read, its prompt tokenized,
// a slot taken (or a refusal), the generation run on it and answered whole or as
// server-sent events (docs/serving.md).
#include <algorithm>
#include <cstdio>
#include <random>

#include "server_impl.h"
#include "absl/strings/match.h"
#include "uaii/grammar.h"
#include "uaii/str_cat.h"

namespace uaii::server {
namespace {

constexpr char kJson[] = "application/json";

// Random [0-9a-z] characters for response ids ("chatcmpl-…").
std::string RandomId(std::string_view prefix) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kAlphabet[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::string id(prefix);
  for (int i = 0; i < 24; ++i) id += kAlphabet[rng() % 36];
  return id;
}

// A request without `seed` gets a fresh one, as llama-server's does.
uint32_t RandomSeed() {
  thread_local std::mt19937 rng{std::random_device{}()};
  return static_cast<uint32_t>(rng());
}

std::string SecondsSince(Clock::time_point start) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f s", std::chrono::duration<double>(Clock::now() - start).count());
  return buf;
}

// The log line's account of a generation (the time and slot follow).
std::string Summary(const GenerationResult& g) {
  return StrCat("prompt ", g.prompt_tokens, " tokens (cached ", g.cached_tokens, "), generated ", g.tokens.size(), " (",
                StopReasonName(g.stop), ")");
}

Clock::time_point Deadline(Clock::time_point start, double seconds) {
  return start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace

bool Watch::Continue() {
  if (stopping->load()) return false;
  if (conn->Gone()) gone = true;
  else if (Clock::now() >= deadline) timed_out = true;
  return !gone && !timed_out;
}

std::optional<std::string> Server::Impl::GrammarOf(const SamplingRequest& r, ApiError* error) const {
  if (r.json_schema) {
    auto g = JsonSchemaToGrammar(*r.json_schema);
    if (!g.ok()) {
      *error = BadRequest(StrCat("response_format: ", std::string(g.status().message())), "response_format");
      return std::nullopt;
    }
    return *std::move(g);
  }
  if (!r.grammar.empty()) {
    if (auto st = ValidateGrammar(r.grammar); !st.ok()) {
      *error = BadRequest(StrCat("grammar: ", std::string(st.message())), "grammar");
      return std::nullopt;
    }
  }
  return r.grammar;
}

void Server::Impl::Generate(std::string_view route_view, const httplib::Request& req, httplib::Response& res,
                            std::span<const TokenId> prompt, bool stream, Clock::time_point start, GenerationRun run) {
  const std::string route(route_view);
  if (static_cast<int64_t>(prompt.size()) >= max_context)
    return Refuse(route, res,
                  MakeError(400,
                            StrCat("the prompt is ", prompt.size(), " tokens; a slot's context holds ", max_context,
                                   " (uaii serve --max-context)"),
                            "invalid_request_error", "context_length_exceeded",
                            route == "/v1/completions" ? "prompt" : "messages"));
  auto conn = std::make_shared<const ClientConnection>(req.remote_addr, req.remote_port, req.local_port);
  const Clock::time_point deadline = Deadline(start, opt.request_timeout_s);
  auto got = pool->Acquire(prompt, deadline, [&] { return conn->Gone() || stopping.load(); });
  if (auto* refusal = std::get_if<SlotPool::Refusal>(&got)) {
    switch (*refusal) {
      case SlotPool::Refusal::kQueueFull:
        return Refuse(route, res,
                      MakeError(429, StrCat("every slot is busy and ", opt.max_queue, " requests are waiting; retry later"),
                                "rate_limit_error", "rate_limit_exceeded"));
      case SlotPool::Refusal::kTimedOut:
        return Refuse(route, res, MakeError(503, "timed out waiting for a free slot", "unavailable_error"));
      case SlotPool::Refusal::kGone:
        res.status = 499;
        return Finish(route, 499, "the client left while queued");
    }
  }
  struct Job {
    std::optional<SlotPool::Lease> lease;
    Watch watch;
    GenerationRun run;
  };
  auto job = std::make_shared<Job>(Job{std::move(std::get<SlotPool::Lease>(got)), Watch{conn, deadline, &stopping},
                                       std::move(run)});
  // Runs on the slot, then frees it: the slot is free before the response's last bytes go.
  auto run_on_slot = [this, job, start](const std::function<bool(const std::string&)>& emit) {
    absl::StatusOr<Outcome> outcome = absl::UnknownError("the generation did not run");
    job->lease->Run([&] { outcome = job->run(job->lease->engine(), job->watch, emit); });
    const int slot = job->lease->index();
    job->lease.reset();
    if (outcome.ok()) {
      metrics.CountTokens(outcome->prompt_tokens, outcome->cached_tokens, outcome->generated_tokens,
                          outcome->reasoning_tokens);
      outcome->summary += StrCat(", ", SecondsSince(start), ", slot ", slot);
    }
    return outcome;
  };

  if (!stream) {
    auto outcome = run_on_slot(nullptr);
    if (!outcome.ok()) return Refuse(route, res, FromStatus(outcome.status()));
    if (job->watch.gone) {
      res.status = 499;
      return Finish(route, 499, StrCat("the client left; ", outcome->summary));
    }
    res.set_content(outcome->body, kJson);
    return Finish(route, 200, outcome->summary);
  }
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider("text/event-stream; charset=utf-8", [this, job, route, run_on_slot](size_t, httplib::DataSink& sink) {
    bool write_failed = false;
    auto send = [&](const std::string& json) {
      if (write_failed) return false;
      const std::string event = StrCat("data: ", json, "\n\n");
      write_failed = !sink.write(event.data(), event.size());
      return !write_failed;
    };
    auto outcome = run_on_slot(send);
    int status = 200;
    std::string detail;
    if (!outcome.ok()) {
      // The stream has started (status 200 sent): the error goes as an event.
      const ApiError e = FromStatus(outcome.status());
      send(ErrorJson(e));
      status = e.status;
      detail = e.message;
    } else {
      for (const auto& chunk : outcome->final_chunks) send(chunk);
      send("[DONE]");
      detail = outcome->summary;
    }
    if (write_failed || job->watch.gone) {
      status = 499;
      detail = StrCat("the client left; ", detail);
    }
    Finish(route, status, detail);
    sink.done();
    return true;
  });
}

void Server::Impl::Chat(const httplib::Request& req, httplib::Response& res) {
  constexpr std::string_view kRoute = "/v1/chat/completions";
  const auto start = Clock::now();
  if (!Ready(res)) return Finish(kRoute, res.status, "");
  ApiError err;
  auto r = ParseChatCompletionRequest(req.body, opt.limits, &err);
  if (!r) return Refuse(kRoute, res, err);
  auto grammar = GrammarOf(*r, &err);
  if (!grammar) return Refuse(kRoute, res, err);
  ChatTurnRequest turn;
  turn.messages_json = r->messages_json;
  turn.tools_json = r->tools_json;
  turn.tool_choice = r->tool_choice;
  turn.think = r->think;
  turn.sampling = r->sampling;
  if (!r->seed_given) turn.sampling.seed = RandomSeed();
  turn.stop = r->stop;
  turn.grammar = *std::move(grammar);
  // Rendered and tokenized once: the slot is picked by these tokens, and the slot's
  // engine runs them as they are.
  auto prompt = pool->any_engine().Prepare(turn);
  if (!prompt.ok()) {
    const bool forced_call = absl::StartsWith(prompt.status().message(), "tool_choice:");
    return Refuse(kRoute, res, FromStatus(prompt.status(), forced_call ? "tool_choice" : "messages"));
  }
  turn.max_tokens = std::min(r->max_tokens.value_or(opt.limits.max_tokens),
                             std::max<int64_t>(0, max_context - static_cast<int64_t>(prompt->tokens.size())));
  const ResponseHeader header{RandomId("chatcmpl-"), static_cast<int64_t>(std::time(nullptr)), model_id};
  const bool include_usage = r->include_usage;
  const std::vector<TokenId> prompt_tokens = prompt->tokens;
  auto run = [this, turn = std::move(turn), prompt = *std::move(prompt), header, include_usage](
                 ChatEngine& engine, Watch& watch,
                 const std::function<bool(const std::string&)>& emit) -> absl::StatusOr<Outcome> {
    ChatTurnRequest t = turn;
    t.on_token = [this, &watch](TokenId, std::string_view) {
      metrics.TokenGenerated();
      return watch.Continue();
    };
    if (emit) emit(ChatChunkJson(header, R"({"role":"assistant","content":""})"));
    int n_calls = 0;
    auto result = engine.Run(t, prompt, [&](const chat::OutputBlock& e) {
      const std::string delta = DeltaJson(e, n_calls);
      if (e.kind == chat::BlockKind::kToolCall) ++n_calls;
      return !emit || delta.empty() || emit(ChatChunkJson(header, delta));
    });
    if (!result.ok()) return result.status();
    const GenerationResult& g = result->generation;
    const bool calls = std::any_of(result->blocks.begin(), result->blocks.end(),
                                   [](const chat::OutputBlock& b) { return b.kind == chat::BlockKind::kToolCall; });
    // A request cut by its time limit ends as one cut by max_tokens.
    const std::string_view finish = watch.timed_out ? "length" : FinishReason(g.stop, calls);
    const Usage usage{g.prompt_tokens, static_cast<int64_t>(g.tokens.size()), g.cached_tokens, result->reasoning_tokens};
    Outcome o;
    o.body = ChatCompletionJson(header, result->blocks, finish, usage);
    o.final_chunks.push_back(ChatChunkJson(header, "{}", finish, &usage));
    if (include_usage) o.final_chunks.push_back(ChatChunkJson(header, "{}", std::nullopt, &usage, /*no_choices=*/true));
    o.prompt_tokens = g.prompt_tokens;
    o.cached_tokens = g.cached_tokens;
    o.generated_tokens = static_cast<int64_t>(g.tokens.size());
    o.reasoning_tokens = result->reasoning_tokens;
    o.summary = Summary(g);
    return o;
  };
  Generate(kRoute, req, res, prompt_tokens, r->stream, start, std::move(run));
}

void Server::Impl::Completion(const httplib::Request& req, httplib::Response& res) {
  constexpr std::string_view kRoute = "/v1/completions";
  const auto start = Clock::now();
  if (!Ready(res)) return Finish(kRoute, res.status, "");
  ApiError err;
  auto r = ParseCompletionRequest(req.body, opt.limits, &err);
  if (!r) return Refuse(kRoute, res, err);
  auto grammar = GrammarOf(*r, &err);
  if (!grammar) return Refuse(kRoute, res, err);
  const Tokenizer& tok = model->tokenizer();
  GenerationRequest g;
  if (r->prompt_is_tokens) {
    for (TokenId id : r->prompt_tokens)
      if (static_cast<size_t>(id) >= tok.vocab_size())
        return Refuse(kRoute, res,
                      BadRequest(StrCat("'prompt' token ", id, " is outside the vocabulary (", tok.vocab_size(), " tokens)"),
                                 "prompt"));
    g.prompt = r->prompt_tokens;
  } else {
    // As llama-server: BOS as the model says, special tokens written in the text read as such.
    auto ids = tok.Encode(r->prompt, EncodeOptions{.parse_special = true, .add_special = true});
    if (!ids.ok()) return Refuse(kRoute, res, FromStatus(ids.status(), "prompt"));
    g.prompt = *std::move(ids);
  }
  if (g.prompt.empty()) return Refuse(kRoute, res, BadRequest("'prompt' is empty", "prompt"));
  g.sampling = r->sampling;
  if (!r->seed_given) g.sampling.seed = RandomSeed();
  g.stop = r->stop;
  g.grammar = *std::move(grammar);
  g.max_tokens = std::min(r->max_tokens.value_or(16), std::max<int64_t>(0, max_context - static_cast<int64_t>(g.prompt.size())));
  const ResponseHeader header{RandomId("cmpl-"), static_cast<int64_t>(std::time(nullptr)), model_id};
  const bool include_usage = r->include_usage;
  const std::vector<TokenId> prompt = g.prompt;
  auto run = [this, g = std::move(g), header, include_usage](
                 ChatEngine& engine, Watch& watch,
                 const std::function<bool(const std::string&)>& emit) -> absl::StatusOr<Outcome> {
    auto result = engine.generator().Run(g, [&](TokenId id, std::string_view text) {
      if (id != kNoToken) metrics.TokenGenerated();
      if (emit && !text.empty() && !emit(CompletionJson(header, text, std::nullopt, nullptr))) return false;
      return watch.Continue();
    });
    if (!result.ok()) return result.status();
    const std::string_view finish = watch.timed_out ? "length" : FinishReason(result->stop, false);
    const Usage usage{result->prompt_tokens, static_cast<int64_t>(result->tokens.size()), result->cached_tokens, 0};
    Outcome o;
    o.body = CompletionJson(header, result->text, finish, &usage);
    o.final_chunks.push_back(CompletionJson(header, "", finish, &usage));
    if (include_usage) o.final_chunks.push_back(CompletionJson(header, "", std::nullopt, &usage));
    o.prompt_tokens = result->prompt_tokens;
    o.cached_tokens = result->cached_tokens;
    o.generated_tokens = static_cast<int64_t>(result->tokens.size());
    o.summary = Summary(*result);
    return o;
  };
  Generate(kRoute, req, res, prompt, r->stream, start, std::move(run));
}

}  // namespace uaii::server
