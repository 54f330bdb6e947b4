#include "hub/http.h"

#include <curl/curl.h>
#include <sys/stat.h>

#include <cctype>
#include <cstdio>
#include <mutex>

#include "util/str_cat.h"

namespace uaii::hub {
namespace {

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct MemSink {
  std::string* body;
  uint64_t max_bytes;
  bool too_big = false;
};

size_t WriteMem(char* p, size_t size, size_t n, void* user) {
  auto* s = static_cast<MemSink*>(user);
  if (s->body->size() + size * n > s->max_bytes) {
    s->too_big = true;
    return 0;
  }
  s->body->append(p, size * n);
  return size * n;
}

struct FileSink {
  std::FILE* f = nullptr;
  const std::string* path = nullptr;
  CURL* curl = nullptr;
  uint64_t resume_from = 0;
  bool decided = false;   // the response status has been checked
  bool restarted = false; // server ignored Range: the file was truncated
  long status = 0;
};

size_t WriteFile(char* p, size_t size, size_t n, void* user) {
  auto* s = static_cast<FileSink*>(user);
  if (!s->decided) {
    s->decided = true;
    curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &s->status);
    if (s->status == 200 && s->resume_from > 0) {  // Range ignored: start over
      s->f = std::freopen(s->path->c_str(), "wb", s->f);
      s->restarted = true;
      if (s->f == nullptr) return 0;
    } else if (s->status != 200 && s->status != 206) {
      return 0;  // error bodies are not written into the file
    }
  }
  return std::fwrite(p, size, n, s->f) * size;
}

struct ProgressCtx {
  const ProgressFn* fn;
  uint64_t base;
};

int OnProgress(void* user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t, curl_off_t) {
  auto* c = static_cast<ProgressCtx*>(user);
  if (*c->fn) (*c->fn)(c->base + static_cast<uint64_t>(dlnow), dltotal > 0 ? c->base + dltotal : 0);
  return 0;
}

}  // namespace

struct HttpClient::Impl {
  HttpOptions opts;
  CURL* curl = nullptr;
  curl_slist* headers = nullptr;

  void Reset() {
    curl_easy_reset(curl);
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 10L);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, opts.connect_timeout_s);
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, opts.stall_timeout_s);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "uaii-pull/0.1");
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  }
};

HttpClient::HttpClient(HttpOptions opts) : impl_(new Impl) {
  GlobalInit();
  impl_->opts = std::move(opts);
  impl_->curl = curl_easy_init();
  if (!impl_->opts.bearer_token.empty())
    impl_->headers = curl_slist_append(nullptr, StrCat("Authorization: Bearer ", impl_->opts.bearer_token).c_str());
}

HttpClient::~HttpClient() {
  curl_slist_free_all(impl_->headers);
  if (impl_->curl) curl_easy_cleanup(impl_->curl);
}

absl::StatusOr<HttpResponse> HttpClient::Get(const std::string& url,
                                             std::optional<std::pair<uint64_t, uint64_t>> range, uint64_t max_bytes) {
  if (impl_->curl == nullptr) return absl::InternalError("curl_easy_init failed");
  impl_->Reset();
  HttpResponse r;
  MemSink sink{&r.body, max_bytes};
  CURL* c = impl_->curl;
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, WriteMem);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  std::string range_str;
  if (range) {
    range_str = StrCat(range->first, "-", range->second);
    curl_easy_setopt(c, CURLOPT_RANGE, range_str.c_str());
  }
  CURLcode rc = curl_easy_perform(c);
  if (sink.too_big) return absl::ResourceExhaustedError(StrCat(url, ": response larger than ", max_bytes, " bytes"));
  if (rc != CURLE_OK) return absl::UnavailableError(StrCat(url, ": ", curl_easy_strerror(rc)));
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
  return r;
}

absl::Status HttpClient::DownloadTo(const std::string& url, const std::string& partial_path, const ProgressFn& progress) {
  if (impl_->curl == nullptr) return absl::InternalError("curl_easy_init failed");
  impl_->Reset();
  struct stat st {};
  uint64_t have = ::stat(partial_path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  FileSink sink;
  sink.f = std::fopen(partial_path.c_str(), "ab");
  if (sink.f == nullptr) return absl::PermissionDeniedError(StrCat(partial_path, ": cannot open for writing"));
  sink.path = &partial_path;
  sink.curl = impl_->curl;
  sink.resume_from = have;
  CURL* c = impl_->curl;
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, WriteFile);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  if (have > 0) curl_easy_setopt(c, CURLOPT_RESUME_FROM_LARGE, static_cast<curl_off_t>(have));
  ProgressCtx pctx{&progress, have};
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, OnProgress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, &pctx);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  CURLcode rc = curl_easy_perform(c);
  long status = sink.status;
  if (!sink.decided) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  const bool write_ok = sink.f != nullptr && std::fflush(sink.f) == 0;
  if (sink.f) std::fclose(sink.f);
  if (auto st = DownloadStatusError(url, status); !st.ok()) return st;
  if (!write_ok) return absl::DataLossError(StrCat(partial_path, ": write failed"));
  if (rc != CURLE_OK) return absl::UnavailableError(StrCat(url, ": transfer interrupted: ", curl_easy_strerror(rc)));
  return absl::OkStatus();
}

absl::Status DownloadStatusError(const std::string& url, long status) {
  if (status == 416) return absl::OutOfRangeError(StrCat(url, ": server refused the resume range (HTTP 416)"));
  if (status != 0 && status != 200 && status != 206) {
    std::string msg = StrCat(url, ": HTTP ", status);
    if (status == 401 || status == 403) return absl::PermissionDeniedError(StrCat(msg, " (gated or private: set HF_TOKEN)"));
    if (status == 404) return absl::NotFoundError(msg);
    return absl::UnavailableError(msg);
  }
  return absl::OkStatus();
}

std::string UrlEncodeSegment(const std::string& s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string UrlEncodePath(const std::string& s) {
  std::string out;
  size_t start = 0;
  while (true) {
    size_t end = s.find('/', start);
    out += UrlEncodeSegment(s.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    out.push_back('/');
    start = end + 1;
  }
  return out;
}

}  // namespace uaii::hub
