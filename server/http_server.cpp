// The server's life (loading in the background, listening, stopping), its routes, the
// API key check and OpenAI-shaped errors for what cpp-httplib refuses itself, and the
// small routes (/health, /v1/models, /metrics, /tokenize, /detokenize, the dashboard).
// The generation routes are in generation_routes.cpp.
#include "http_server.h"

#include <algorithm>

#include "dashboard.h"
#include "server_impl.h"
#include "uaii/json_writer.h"
#include "uaii/str_cat.h"

namespace uaii::server {

void Reply(httplib::Response& res, const ApiError& e) {
  res.status = e.status;
  res.set_content(ErrorJson(e), "application/json");
}

namespace {

constexpr char kJson[] = "application/json";

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

}  // namespace

void Server::Impl::Load() {
  for (int waited = 0; waited < opt.load_delay_ms && !stopping; waited += 10)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  absl::Status status;
  auto m = Model::Load(opt.model_path);
  if (!m.ok()) {
    status = m.status();
  } else {
    SessionOptions so = opt.session;
    if (opt.threads_per_slot > 0)
      so.threads = opt.threads_per_slot;
    else
      so.compute_threads =
          ComputeThreads::Create(so.threads, opt.batch_steps ? StepBatching::kAcrossSessions : StepBatching::kOff);
    std::vector<std::unique_ptr<ChatEngine>> engines;
    for (int i = 0; i < opt.parallel && status.ok() && !stopping; ++i) {
      auto gen = Generator::Create(*m, so);
      if (!gen.ok()) { status = gen.status(); break; }
      auto engine = ChatEngine::Create(std::shared_ptr<Generator>(*std::move(gen)), opt.chat_template_path);
      if (!engine.ok()) { status = engine.status(); break; }
      if (i == 0 && !(*engine)->template_note().empty()) Log((*engine)->template_note());
      if (i == 0) {
        Session& session = (*engine)->generator().session();
        Log(session.device_note().empty() ? "device: " + session.device() : "device: " + session.device_note());
      }
      engines.push_back(*std::move(engine));
    }
    if (status.ok() && engines.size() == static_cast<size_t>(opt.parallel)) {
      model = *std::move(m);
      compute = so.compute_threads;
      max_context = engines[0]->generator().session().max_context();
      pool = std::make_unique<SlotPool>(std::move(engines), opt.max_queue);
      loaded.store(true, std::memory_order_release);
      Log(StrCat("model loaded: ", model_id, ", ", opt.parallel, " slot(s) of ", max_context, " positions, ",
                 so.compute_threads ? StrCat(so.compute_threads->size(), " thread(s) shared",
                                             opt.batch_steps ? ", steps batched" : "")
                                    : StrCat(so.threads, " thread(s) each")));
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
  std::lock_guard<std::mutex> l(load_mu);
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
    if (compute) g.batch = compute->batch_stats();
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
