// The OpenAI-compatible HTTP server over one Model (docs/serving.md), on cpp-httplib:
//   POST /v1/chat/completions, /v1/completions   (stream: server-sent events, data: [DONE])
//   GET  /v1/models, /health (503 while loading), /metrics (Prometheus), / (dashboard)
//   POST /tokenize, /detokenize                  (llama-server's)
// N slots serve N requests at once, a queue holds more; a client that disconnects
// cancels its generation. It uses only the public surface (include/uaii).
#pragma once
#include <memory>

#include "absl/status/status.h"
#include "serve_options.h"

namespace uaii::server {

class Server {
 public:
  explicit Server(ServeOptions options);
  ~Server();  // stops
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds host:port and starts answering at once; the model loads in the background
  // (/health answers 503 until it has, every model route too). Fails when the address
  // cannot be bound.
  absl::Status Start();
  int port() const;
  // Blocks until the model has loaded (OK) or failed to (its error).
  absl::Status WaitUntilLoaded();
  // Stops answering; generations in flight are cancelled.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace uaii::server
