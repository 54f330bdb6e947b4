// How `uaii serve` runs (docs/serving.md): where it listens, its slots and queue, its
// limits, and the sessions its slots open.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "openai_request.h"
#include "uaii/session.h"

namespace uaii::server {

struct ServeOptions {
  std::string model_path;
  std::string chat_template_path;  // "" the model's own (or the built-in stand-in)
  std::string host = "127.0.0.1";
  int port = 8080;                 // 0: any free port (Server::port() says which)
  int parallel = 1;                // slots: generations at once
  size_t max_queue = 64;           // requests waiting for a slot, beyond them 429
  std::string api_key;             // "": no key; else every route but / and /health needs it
  // Each slot's session. Its threads (<= 0: the physical cores) are one set the slots
  // share (ComputeThreads: a lone request uses all of them, many take turns), unless
  // threads_per_slot gives each slot that many threads of its own.
  SessionOptions session;
  int threads_per_slot = 0;
  // With shared threads, the slots' steps pending at once run as one batched forward
  // pass (StepBatching::kAcrossSessions); false: each slot's pass alone.
  bool batch_steps = true;
  RequestLimits limits;
  size_t max_body_bytes = 8 << 20;   // larger bodies: 413
  double request_timeout_s = 600;    // a request's whole time (queue + generation)
  // Waits this long before loading the model: the loading state (503) made long enough
  // to observe, for tests (the CLI reads UAII_SERVE_LOAD_DELAY_MS).
  int load_delay_ms = 0;
  // One line per generation request and per event worth a line ("" none).
  std::function<void(std::string_view)> log = nullptr;
};

}  // namespace uaii::server
