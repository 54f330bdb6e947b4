#include "http_server.h"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "client_connection.h"
#include "dashboard.h"
#include "metrics.h"
#include "openai_response.h"
#include "slot_pool.h"
#include "uaii/chat.h"
#include "uaii/grammar.h"
#include "uaii/json_writer.h"
#include "uaii/str_cat.h"

namespace uaii::server {
namespace {

using Clock = std::chrono::steady_clock;
constexpr char kJson[] = "application/json";

// Random [0-9a-z] characters for response ids ("chatcmpl-…").
std::string RandomId(std::string_view prefix) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kAlphabet[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::string id(prefix);
  for (int i = 0; i < 24; ++i) id += kAlphabet[rng() % 36];
  return id;
}

uint32_t RandomSeed() {
  thread_local std::mt19937 rng{std::random_device{}()};
  return static_cast<uint32_t>(rng());
}

void Reply(httplib::Response& res, const ApiError& e) {
  res.status = e.status;
  res.set_content(ErrorJson(e), kJson);
}

// Compares in time independent of where the strings differ (an API key).
bool SameSecret(std::string_view a, std::string_view b) {
  unsigned diff = a.size() != b.size();
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i)
    diff |= static_cast<unsigned char>(i < a.size() ? a[i] : 0) ^ static_cast<unsigned char>(i < b.size() ? b[i] : 0);
  return diff == 0;
}

std::string StatusText(int status) {
  switch (status) {
    case 400: return "the request could not be read";
    case 401: return "invalid API key";
    case 404: return "no such route";
    case 405: return "method not allowed on this route";
    case 413: return "the request body is larger than the server accepts";
    case 414: return "the request URI is too long";
    default: return status >= 500 ? "internal server error" : "request failed";
  }
}

std::string SseEvent(std::string_view data) { return StrCat("data: ", data, "\n\n"); }

std::string SecondsSince(Clock::time_point start) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f s", std::chrono::duration<double>(Clock::now() - start).count());
  return buf;
}

// What ends a generation early, seen between tokens.
struct Watch {
  const ClientConnection* conn;
  Clock::time_point deadline;
  const std::atomic<bool>* stopping;
  bool gone = false, timed_out = false;
  // False when the generation must stop now.
  bool Continue() {
    if (stopping->load()) return false;
    if (conn->Gone()) gone = true;
    else if (Clock::now() >= deadline) timed_out = true;
    return !gone && !timed_out;
  }
};

}  // namespace

struct Server::Impl {
  ServeOptions opt;
  httplib::Server http;
  std::thread listener, loader;
  std::atomic<bool> stopping{false};
  int bound_port = -1;

  // Set once by the loader, read after `loaded` (acquire) says so.
  std::atomic<bool> loaded{false};
  std::shared_ptr<const Model> model;
  std::unique_ptr<SlotPool> pool;
  int64_t max_context = 0;
  std::mutex load_mu;
  std::condition_variable load_cv;
  bool load_done = false;
  absl::Status load_status;

  Metrics metrics;
  std::string model_id;
  int64_t created = std::time(nullptr);

  explicit Impl(ServeOptions o) : opt(std::move(o)) {
    model_id = std::filesystem::path(opt.model_path).filename().string();
  }

  void Log(std::string_view line) const {
    if (opt.log) opt.log(line);
  }

  void Load();
  void Routes();
  bool Ready(httplib::Response& res) const;
  void Finish(std::string_view route, int status, std::string_view detail);
  void Refuse(std::string_view route, httplib::Response& res, const ApiError& e) {
    Reply(res, e);
    Finish(route, e.status, e.message);
  }
  // Takes a slot for `prompt` or answers why not (and returns nullopt).
  std::optional<SlotPool::Lease> TakeSlot(std::string_view route, std::span<const TokenId> prompt,
                                          const ClientConnection& conn, Clock::time_point deadline,
                                          httplib::Response& res);
  // The grammar a request's grammar / response_format asks for ("" none).
  std::optional<std::string> GrammarOf(const SamplingRequest& r, ApiError* error) const;

  void Chat(const httplib::Request& req, httplib::Response& res);
  void Completion(const httplib::Request& req, httplib::Response& res);
  void Tokenize(const httplib::Request& req, httplib::Response& res);
  void Detokenize(const httplib::Request& req, httplib::Response& res);
  Gauges ReadGauges() const;
};

void Server::Impl::Load() {
  for (int waited = 0; waited < opt.load_delay_ms && !stopping; waited += 10)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  absl::Status status;
  auto m = Model::Load(opt.model_path);
  if (!m.ok()) {
    status = m.status();
  } else {
    SessionOptions so = opt.session;
    if (so.threads <= 0)
      so.threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / std::max(1, opt.parallel));
    std::vector<std::unique_ptr<ChatEngine>> engines;
    for (int i = 0; i < opt.parallel && status.ok() && !stopping; ++i) {
      auto gen = Generator::Create(*m, so);
      if (!gen.ok()) { status = gen.status(); break; }
      auto engine = ChatEngine::Create(std::shared_ptr<Generator>(*std::move(gen)), opt.chat_template_path);
      if (!engine.ok()) { status = engine.status(); break; }
      if (i == 0 && !(*engine)->template_note().empty()) Log((*engine)->template_note());
      engines.push_back(*std::move(engine));
    }
    if (status.ok() && engines.size() == static_cast<size_t>(opt.parallel)) {
      model = *std::move(m);
      max_context = engines[0]->generator().session().max_context();
      pool = std::make_unique<SlotPool>(std::move(engines), opt.max_queue);
      loaded.store(true, std::memory_order_release);
      Log(StrCat("model loaded: ", model_id, ", ", opt.parallel, " slot(s) of ", max_context, " positions, ",
                 so.threads, " thread(s) each"));
    } else if (status.ok()) {
      status = absl::CancelledError("stopped while loading");
    }
  }
  std::lock_guard<std::mutex> l(load_mu);
  load_done = true;
  load_status = status;
  load_cv.notify_all();
}

bool Server::Impl::Ready(httplib::Response& res) const {
  if (loaded.load(std::memory_order_acquire)) return true;
  std::lock_guard<std::mutex> l(const_cast<std::mutex&>(load_mu));
  if (load_done && !load_status.ok())
    Reply(res, MakeError(500, StrCat("the model failed to load: ", std::string(load_status.message())), "server_error"));
  else
    Reply(res, MakeError(503, "Loading model", "unavailable_error"));
  return false;
}

void Server::Impl::Finish(std::string_view route, int status, std::string_view detail) {
  metrics.CountRequest(route, status);
  Log(StrCat(route, " ", status, detail.empty() ? "" : ": ", detail));
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

std::optional<SlotPool::Lease> Server::Impl::TakeSlot(std::string_view route, std::span<const TokenId> prompt,
                                                      const ClientConnection& conn, Clock::time_point deadline,
                                                      httplib::Response& res) {
  if (static_cast<int64_t>(prompt.size()) >= max_context) {
    Refuse(route, res,
           MakeError(400,
                     StrCat("the prompt is ", prompt.size(), " tokens; a slot's context holds ", max_context,
                            " (uaii serve --max-context)"),
                     "invalid_request_error", "context_length_exceeded", route == "/v1/completions" ? "prompt" : "messages"));
    return std::nullopt;
  }
  auto got = pool->Acquire(prompt, deadline, [&] { return conn.Gone() || stopping.load(); });
  if (auto* lease = std::get_if<SlotPool::Lease>(&got)) return std::move(*lease);
  switch (std::get<SlotPool::Refusal>(got)) {
    case SlotPool::Refusal::kQueueFull:
      Refuse(route, res,
             MakeError(429, StrCat("every slot is busy and ", opt.max_queue, " requests are waiting; retry later"),
                       "rate_limit_error", "rate_limit_exceeded"));
      break;
    case SlotPool::Refusal::kTimedOut:
      Refuse(route, res,
             MakeError(503, "timed out waiting for a free slot", "unavailable_error"));
      break;
    case SlotPool::Refusal::kGone:
      res.status = 499;
      Finish(route, 499, "the client left while queued");
      break;
  }
  return std::nullopt;
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
  turn.think = r->think;
  turn.sampling = r->sampling;
  if (!r->seed_given) turn.sampling.seed = RandomSeed();
  turn.stop = r->stop;
  turn.grammar = *std::move(grammar);
  auto prompt = pool->any_engine().PromptTokens(turn);
  if (!prompt.ok()) return Refuse(kRoute, res, FromStatus(prompt.status(), "messages"));
  turn.max_tokens = std::min(r->max_tokens.value_or(opt.limits.max_tokens),
                             std::max<int64_t>(0, max_context - static_cast<int64_t>(prompt->size())));

  auto conn = std::make_shared<ClientConnection>(req.remote_addr, req.remote_port, req.local_port);
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(opt.request_timeout_s));
  auto lease = TakeSlot(kRoute, *prompt, *conn, deadline, res);
  if (!lease) return;
  const ResponseHeader header{RandomId("chatcmpl-"), static_cast<int64_t>(std::time(nullptr)), model_id};

  // Runs the turn on the slot; `send` (streaming) sees each event's delta.
  struct Job {
    std::optional<SlotPool::Lease> lease;
    ChatTurnRequest turn;
    std::shared_ptr<ClientConnection> conn;
    Watch watch;
  };
  auto job = std::make_shared<Job>(Job{std::move(lease), std::move(turn), conn, Watch{conn.get(), deadline, &stopping}});
  job->turn.on_token = [this, job](TokenId, std::string_view) {
    metrics.TokenGenerated();
    return job->watch.Continue();
  };
  auto usage_of = [](const ChatTurnResult& t) {
    return Usage{t.generation.prompt_tokens, static_cast<int64_t>(t.generation.tokens.size()), t.generation.cached_tokens,
                 t.reasoning_tokens};
  };
  auto summary = [start](const ChatTurnResult& t, int slot) {
    return StrCat("prompt ", t.generation.prompt_tokens, " tokens (cached ", t.generation.cached_tokens,
                  "), generated ", t.generation.tokens.size(), " (", StopReasonName(t.generation.stop), "), ",
                  SecondsSince(start), ", slot ", slot);
  };
  auto finish_reason = [](const ChatTurnResult& t, const Watch& w) -> std::string_view {
    bool calls = std::any_of(t.blocks.begin(), t.blocks.end(),
                             [](const chat::OutputBlock& b) { return b.kind == chat::BlockKind::kToolCall; });
    return w.timed_out && !calls ? "length" : FinishReason(t.generation.stop, calls);
  };

  if (!r->stream) {
    auto t = job->lease->engine().Run(job->turn);
    const int slot = job->lease->index();
    job->lease.reset();
    if (!t.ok()) return Refuse(kRoute, res, FromStatus(t.status()));
    metrics.CountTokens(t->generation.prompt_tokens, t->generation.cached_tokens,
                        static_cast<int64_t>(t->generation.tokens.size()), t->reasoning_tokens);
    if (job->watch.gone) {
      res.status = 499;
      return Finish(kRoute, 499, StrCat("the client left; ", summary(*t, slot)));
    }
    res.set_content(ChatCompletionJson(header, t->blocks, finish_reason(*t, job->watch), usage_of(*t)), kJson);
    return Finish(kRoute, 200, summary(*t, slot));
  }

  const bool include_usage = r->include_usage;
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream",
      [this, job, header, include_usage, usage_of, summary, finish_reason](size_t, httplib::DataSink& sink) {
        bool write_failed = false;
        auto send = [&](std::string_view json) {
          if (write_failed) return false;
          const std::string event = SseEvent(json);
          if (!sink.write(event.data(), event.size())) write_failed = true;
          return !write_failed;
        };
        send(ChatChunkJson(header, R"({"role":"assistant","content":""})"));
        int n_calls = 0;
        auto t = job->lease->engine().Run(job->turn, [&](const chat::OutputBlock& e) {
          const std::string delta = DeltaJson(e, n_calls);
          if (e.kind == chat::BlockKind::kToolCall) ++n_calls;
          if (!delta.empty() && !send(ChatChunkJson(header, delta))) return false;
          return true;
        });
        const int slot = job->lease->index();
        job->lease.reset();
        int status = 200;
        std::string detail;
        if (!t.ok()) {
          ApiError e = FromStatus(t.status());
          send(ErrorJson(e));
          status = e.status;
          detail = e.message;
        } else {
          metrics.CountTokens(t->generation.prompt_tokens, t->generation.cached_tokens,
                              static_cast<int64_t>(t->generation.tokens.size()), t->reasoning_tokens);
          const Usage usage = usage_of(*t);
          send(ChatChunkJson(header, "{}", finish_reason(*t, job->watch), &usage));
          if (include_usage) send(ChatChunkJson(header, "{}", std::nullopt, &usage, /*no_choices=*/true));
          send("[DONE]");
          detail = summary(*t, slot);
        }
        if (write_failed || job->watch.gone) {
          status = 499;
          detail = StrCat("the client left; ", detail);
        }
        Finish("/v1/chat/completions", status, detail);
        sink.done();
        return true;
      });
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
        return Refuse(kRoute, res, BadRequest(StrCat("'prompt' token ", id, " is outside the vocabulary (", tok.vocab_size(),
                                                     " tokens)"), "prompt"));
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

  auto conn = std::make_shared<ClientConnection>(req.remote_addr, req.remote_port, req.local_port);
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(opt.request_timeout_s));
  auto lease = TakeSlot(kRoute, g.prompt, *conn, deadline, res);
  if (!lease) return;
  const ResponseHeader header{RandomId("cmpl-"), static_cast<int64_t>(std::time(nullptr)), model_id};
  struct Job {
    std::optional<SlotPool::Lease> lease;
    GenerationRequest request;
    std::shared_ptr<ClientConnection> conn;
    Watch watch;
  };
  auto job = std::make_shared<Job>(Job{std::move(lease), std::move(g), conn, Watch{conn.get(), deadline, &stopping}});
  auto usage_of = [](const GenerationResult& t) {
    return Usage{t.prompt_tokens, static_cast<int64_t>(t.tokens.size()), t.cached_tokens, 0};
  };
  auto summary = [start](const GenerationResult& t, int slot) {
    return StrCat("prompt ", t.prompt_tokens, " tokens (cached ", t.cached_tokens, "), generated ", t.tokens.size(), " (",
                  StopReasonName(t.stop), "), ", SecondsSince(start), ", slot ", slot);
  };
  auto finish_reason = [](const GenerationResult& t, const Watch& w) -> std::string_view {
    return w.timed_out ? "length" : FinishReason(t.stop, false);
  };
  // Runs the request on the slot; `on_text` sees each piece of released text.
  auto run = [this, job](const std::function<bool(std::string_view)>& on_text) {
    return job->lease->engine().generator().Run(job->request, [&](TokenId id, std::string_view text) {
      if (id != kNoToken) metrics.TokenGenerated();
      if (!text.empty() && on_text && !on_text(text)) return false;
      return job->watch.Continue();
    });
  };

  if (!r->stream) {
    auto t = run(nullptr);
    const int slot = job->lease->index();
    job->lease.reset();
    if (!t.ok()) return Refuse(kRoute, res, FromStatus(t.status()));
    metrics.CountTokens(t->prompt_tokens, t->cached_tokens, static_cast<int64_t>(t->tokens.size()), 0);
    if (job->watch.gone) {
      res.status = 499;
      return Finish(kRoute, 499, StrCat("the client left; ", summary(*t, slot)));
    }
    const Usage usage = usage_of(*t);
    res.set_content(CompletionJson(header, t->text, finish_reason(*t, job->watch), &usage), kJson);
    return Finish(kRoute, 200, summary(*t, slot));
  }
  const bool include_usage = r->include_usage;
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream",
      [this, job, header, include_usage, usage_of, summary, finish_reason, run](size_t, httplib::DataSink& sink) {
        bool write_failed = false;
        auto send = [&](std::string_view json) {
          if (write_failed) return false;
          const std::string event = SseEvent(json);
          if (!sink.write(event.data(), event.size())) write_failed = true;
          return !write_failed;
        };
        auto t = run([&](std::string_view text) { return send(CompletionJson(header, text, std::nullopt, nullptr)); });
        const int slot = job->lease->index();
        job->lease.reset();
        int status = 200;
        std::string detail;
        if (!t.ok()) {
          ApiError e = FromStatus(t.status());
          send(ErrorJson(e));
          status = e.status;
          detail = e.message;
        } else {
          metrics.CountTokens(t->prompt_tokens, t->cached_tokens, static_cast<int64_t>(t->tokens.size()), 0);
          const Usage usage = usage_of(*t);
          send(CompletionJson(header, "", finish_reason(*t, job->watch), &usage));
          if (include_usage) send(CompletionJson(header, "", std::nullopt, &usage));
          send("[DONE]");
          detail = summary(*t, slot);
        }
        if (write_failed || job->watch.gone) {
          status = 499;
          detail = StrCat("the client left; ", detail);
        }
        Finish("/v1/completions", status, detail);
        sink.done();
        return true;
      });
}

void Server::Impl::Tokenize(const httplib::Request& req, httplib::Response& res) {
  if (!Ready(res)) return;
  ApiError err;
  auto r = ParseTokenizeRequest(req.body, &err);
  if (!r) return Reply(res, err);
  const Tokenizer& tok = model->tokenizer();
  auto ids = tok.Encode(r->content, EncodeOptions{.parse_special = r->parse_special, .add_special = r->add_special});
  if (!ids.ok()) return Reply(res, FromStatus(ids.status(), "content"));
  JsonWriter w;
  w.BeginObject().Key("tokens").BeginArray();
  for (TokenId id : *ids) {
    if (!r->with_pieces) {
      w.Int(id);
      continue;
    }
    w.BeginObject().Key("id").Int(id).Key("piece").String(tok.TokenBytes(id)).EndObject();
  }
  w.EndArray().EndObject();
  res.set_content(w.str(), kJson);
}

void Server::Impl::Detokenize(const httplib::Request& req, httplib::Response& res) {
  if (!Ready(res)) return;
  ApiError err;
  auto r = ParseDetokenizeRequest(req.body, &err);
  if (!r) return Reply(res, err);
  const Tokenizer& tok = model->tokenizer();
  for (TokenId id : r->tokens)
    if (static_cast<size_t>(id) >= tok.vocab_size())
      return Reply(res, BadRequest(StrCat("token ", id, " is outside the vocabulary (", tok.vocab_size(), " tokens)"),
                                   "tokens"));
  JsonWriter w;
  w.BeginObject().Key("content").String(tok.Decode(r->tokens)).EndObject();
  res.set_content(w.str(), kJson);
}

Gauges Server::Impl::ReadGauges() const {
  Gauges g;
  g.loaded = loaded.load(std::memory_order_acquire);
  g.rss_bytes = CurrentRssBytes();
  g.model = model_id;
  g.device = opt.session.device;
  g.slots = opt.parallel;
  if (g.loaded) {
    g.busy = pool->busy();
    g.queued = pool->queued();
    g.storage = pool->storage_stats();
  }
  return g;
}

void Server::Impl::Routes() {
  // Every thread a request can need at once: the slots, the queue, and a few for the
  // routes that must answer while all of those wait (/health, /metrics, refusals).
  const size_t threads = static_cast<size_t>(opt.parallel) + opt.max_queue + 8;
  http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  http.set_payload_max_length(opt.max_body_bytes);
  http.set_default_headers({{"Access-Control-Allow-Origin", "*"}});
  http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    using R = httplib::Server::HandlerResponse;
    if (req.method == "OPTIONS") {  // a browser's CORS preflight
      res.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type");
      res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
      res.status = 204;
      return R::Handled;
    }
    if (opt.api_key.empty() || req.path == "/" || req.path == "/health") return R::Unhandled;
    const std::string auth = req.get_header_value("Authorization");
    constexpr std::string_view kBearer = "Bearer ";
    if (auth.size() > kBearer.size() && auth.compare(0, kBearer.size(), kBearer) == 0 &&
        SameSecret(std::string_view(auth).substr(kBearer.size()), opt.api_key))
      return R::Unhandled;
    Reply(res, MakeError(401, auth.empty() ? "no API key given (Authorization: Bearer KEY)" : "invalid API key",
                         "authentication_error", "invalid_api_key"));
    metrics.CountRequest(req.path, 401);
    return R::Handled;
  });
  http.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return;
    Reply(res, MakeError(res.status, StatusText(res.status),
                         res.status == 404   ? "not_found_error"
                         : res.status >= 500 ? "server_error"
                                             : "invalid_request_error"));
  });
  http.set_exception_handler([this](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown exception";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    Reply(res, MakeError(500, StrCat("internal error: ", what), "server_error"));
    Finish(req.path, 500, what);
  });

  auto chat = [this](const httplib::Request& q, httplib::Response& s) { Chat(q, s); };
  auto completion = [this](const httplib::Request& q, httplib::Response& s) { Completion(q, s); };
  auto models = [this](const httplib::Request&, httplib::Response& s) {
    if (!Ready(s)) return;
    s.set_content(ModelsJson(model_id, created), kJson);
  };
  http.Post("/v1/chat/completions", chat);
  http.Post("/chat/completions", chat);
  http.Post("/v1/completions", completion);
  http.Post("/completions", completion);
  http.Get("/v1/models", models);
  http.Get("/models", models);
  http.Post("/tokenize", [this](const httplib::Request& q, httplib::Response& s) { Tokenize(q, s); });
  http.Post("/detokenize", [this](const httplib::Request& q, httplib::Response& s) { Detokenize(q, s); });
  http.Get("/health", [this](const httplib::Request&, httplib::Response& s) {
    if (Ready(s)) s.set_content(R"({"status":"ok"})", kJson);
  });
  http.Get("/metrics", [this](const httplib::Request&, httplib::Response& s) {
    s.set_content(metrics.Prometheus(ReadGauges()), "text/plain; version=0.0.4");
  });
  http.Get("/", [](const httplib::Request&, httplib::Response& s) {
    s.set_content(std::string(DashboardHtml()), "text/html; charset=utf-8");
  });
}

Server::Server(ServeOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

Server::~Server() { Stop(); }

absl::Status Server::Start() {
  Impl& s = *impl_;
  if (s.opt.parallel < 1 || s.opt.parallel > 256)
    return absl::InvalidArgumentError(StrCat("--parallel ", s.opt.parallel, " is outside 1..256"));
  s.Routes();
  s.bound_port = s.opt.port == 0 ? s.http.bind_to_any_port(s.opt.host) : (s.http.bind_to_port(s.opt.host, s.opt.port) ? s.opt.port : -1);
  if (s.bound_port < 0)
    return absl::UnavailableError(StrCat("cannot listen on ", s.opt.host, ":", s.opt.port,
                                         " (in use, or not an address of this machine)"));
  s.listener = std::thread([&s] { s.http.listen_after_bind(); });
  // Until it listens, a stop() would be lost (the listen loop sets itself running).
  for (int i = 0; i < 2000 && !s.http.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  s.loader = std::thread([&s] { s.Load(); });
  return absl::OkStatus();
}

int Server::port() const { return impl_->bound_port; }

absl::Status Server::WaitUntilLoaded() {
  std::unique_lock<std::mutex> l(impl_->load_mu);
  impl_->load_cv.wait(l, [&] { return impl_->load_done; });
  return impl_->load_status;
}

void Server::Stop() {
  Impl& s = *impl_;
  s.stopping = true;
  s.http.stop();
  if (s.listener.joinable()) s.listener.join();
  if (s.loader.joinable()) s.loader.join();
}

}  // namespace uaii::server
