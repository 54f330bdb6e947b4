// What a Server holds and how its routes share it (server/http_server.cpp: loading,
// routing, auth and the small routes; generation_routes.cpp: chat and completions).
#pragma once
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>

#include "api_error.h"
#include "client_connection.h"
#include "http_server.h"
#include "metrics.h"
#include "openai_response.h"
#include "slot_pool.h"

namespace uaii::server {

using Clock = std::chrono::steady_clock;

void Reply(httplib::Response& res, const ApiError& e);

// What ends a generation early, seen between tokens: the client left, the request's
// time is up, or the server is stopping.
struct Watch {
  std::shared_ptr<const ClientConnection> conn;
  Clock::time_point deadline;
  const std::atomic<bool>* stopping;
  bool gone = false, timed_out = false;
  // False when the generation must stop now.
  bool Continue();
};

// A generation's result, in the forms both kinds of response need.
struct Outcome {
  std::string body;                       // the whole response (not streamed)
  std::vector<std::string> final_chunks;  // a stream's last chunks (finish_reason, usage)
  int64_t prompt_tokens = 0, cached_tokens = 0, generated_tokens = 0, reasoning_tokens = 0;
  std::string summary;                    // for the log line
};
// Runs a generation on a slot's engine. `emit` (null unless streaming) sends one
// chunk's JSON and returns false once the client is gone.
using GenerationRun =
    std::function<absl::StatusOr<Outcome>(ChatEngine& engine, Watch& watch,
                                          const std::function<bool(const std::string&)>& emit)>;

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
  std::shared_ptr<ComputeThreads> compute;  // the slots' shared threads (null: threads per slot)
  int64_t max_context = 0;
  mutable std::mutex load_mu;
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
  // True once the model is loaded; else answers 503 (loading) or 500 (failed to load).
  bool Ready(httplib::Response& res) const;
  void Finish(std::string_view route, int status, std::string_view detail);
  void Refuse(std::string_view route, httplib::Response& res, const ApiError& e) {
    Reply(res, e);
    Finish(route, e.status, e.message);
  }
  // The grammar a request's grammar / response_format asks for ("" none).
  std::optional<std::string> GrammarOf(const SamplingRequest& r, ApiError* error) const;
  // Takes a slot for `prompt` and answers with `run`'s generation on it, streamed or
  // not; or answers why not (context, queue, timeout, the client gone).
  void Generate(std::string_view route, const httplib::Request& req, httplib::Response& res,
                std::span<const TokenId> prompt, bool stream, Clock::time_point start, GenerationRun run);

  void Chat(const httplib::Request& req, httplib::Response& res);
  void Completion(const httplib::Request& req, httplib::Response& res);
  void Tokenize(const httplib::Request& req, httplib::Response& res);
  void Detokenize(const httplib::Request& req, httplib::Response& res);
  Gauges ReadGauges() const;
};

}  // namespace uaii::server
