// A small HTTP client on libcurl for the Hub: GET into memory (API JSON, config.json,
// safetensors header ranges) and resumable downloads into a `.partial` file.
// Redirects are followed (the Hub answers /resolve/ with a CDN redirect); only http and
// https are allowed; curl does not forward the Authorization header to another host.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace uaii::hub {

struct HttpOptions {
  std::string bearer_token;      // HF_TOKEN; sent as "Authorization: Bearer ..." when non-empty
  long connect_timeout_s = 30;
  long stall_timeout_s = 60;     // abort when under 1 byte/s for this long
};

struct HttpResponse {
  long status = 0;
  std::string body;
};

// (bytes done, bytes total or 0 when unknown) -> called often during a transfer.
using ProgressFn = std::function<void(uint64_t done, uint64_t total)>;

class HttpClient {
 public:
  explicit HttpClient(HttpOptions opts);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // GET `url`; with `range` = {first, last} (inclusive) asks for those bytes. Transport
  // errors are Unavailable; HTTP errors come back as the status (the caller decides).
  // Bodies above `max_bytes` abort the transfer (ResourceExhausted).
  absl::StatusOr<HttpResponse> Get(const std::string& url,
                                   std::optional<std::pair<uint64_t, uint64_t>> range = std::nullopt,
                                   uint64_t max_bytes = 256ull << 20);

  // Appends `url`'s bytes to `partial_path`, resuming from its current size with a Range
  // request (a server that ignores Range restarts the file). Ok when the transfer ended
  // normally; Unavailable when it was cut (the caller may retry: the partial file stays).
  absl::Status DownloadTo(const std::string& url, const std::string& partial_path, const ProgressFn& progress);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// What a download's final HTTP status means: Ok for 200 / 206 (and 0: no response,
// the transfer error decides), else the error DownloadTo returns (416: the resume range
// was refused; 401 / 403: gated or private; 404: not found; others: unavailable).
absl::Status DownloadStatusError(const std::string& url, long status);

// Percent-encodes one path segment (RFC 3986 unreserved characters are kept).
std::string UrlEncodeSegment(const std::string& s);
// Percent-encodes every segment of a slash-separated path, keeping the slashes.
std::string UrlEncodePath(const std::string& s);

}  // namespace uaii::hub
