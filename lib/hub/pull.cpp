#include "hub/pull.h"

#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "util/sha256.h"
#include "loaders/hf_config.h"
#include "loaders/hf_family.h"
#include "loaders/safetensors_file.h"
#include "loaders/safetensors_index.h"
#include "models/hf_graph.h"
#include "uaii/progress_bar.h"
#include "util/str_cat.h"

namespace uaii::hub {
namespace {

namespace fs = std::filesystem;

bool EndsWith(std::string_view s, std::string_view suf) {
  return s.size() >= suf.size() && s.substr(s.size() - suf.size()) == suf;
}

// Weights in formats uaii does not read; skipped by default when safetensors exist.
constexpr std::string_view kOtherWeightSuffixes[] = {".bin", ".pth", ".pt", ".h5", ".msgpack", ".onnx",
                                                     ".onnx_data", ".gguf", ".ot", ".tflite", ".mlmodel"};

std::string Mib(uint64_t b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(b) / (1 << 20));
  return buf;
}

// Creates the parent directories of `rel` under `outdir`, refusing any symlink on the way.
absl::Status PrepareParents(const fs::path& outdir, const std::string& rel) {
  fs::path cur = outdir;
  const fs::path relp(rel);
  std::vector<fs::path> parts(relp.begin(), relp.end());
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    cur /= parts[i];
    struct stat st {};
    if (::lstat(cur.c_str(), &st) == 0) {
      if (S_ISLNK(st.st_mode)) return absl::PermissionDeniedError(StrCat(cur.string(), ": is a symlink; refusing to write through it"));
      if (!S_ISDIR(st.st_mode)) return absl::AlreadyExistsError(StrCat(cur.string(), ": exists and is not a directory"));
      continue;
    }
    if (::mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST)
      return absl::PermissionDeniedError(StrCat(cur.string(), ": cannot create directory"));
    if (::lstat(cur.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      return absl::PermissionDeniedError(StrCat(cur.string(), ": not a directory after creation"));
  }
  for (const fs::path& p : {outdir / rel, fs::path((outdir / rel).string() + ".partial")}) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
      return absl::PermissionDeniedError(StrCat(p.string(), ": exists and is not a regular file (symlink?); refusing to write"));
  }
  return absl::OkStatus();
}

uint64_t FileSize(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

// Size and digest of a finished file against the listing.
absl::Status Verify(const std::string& path, const HubFile& f, std::string& digest) {
  const uint64_t size = FileSize(path);
  if (f.size && size != *f.size)
    return absl::DataLossError(StrCat(f.path, ": size mismatch: expected ", *f.size, " bytes, got ", size));
  if (!f.sha256.empty()) {
    auto got = FileSha256(path);
    if (!got.ok()) return got.status();
    if (*got != f.sha256)
      return absl::DataLossError(StrCat(f.path, ": SHA-256 mismatch: expected ", f.sha256, ", got ", *got));
    digest = *got;
  }
  return absl::OkStatus();
}

absl::StatusOr<PulledFile> FetchOne(HttpClient& http, const PullOptions& o, const fs::path& outdir, const HubFile& f) {
  PulledFile out;
  out.path = f.path;
  if (auto st = PrepareParents(outdir, f.path); !st.ok()) return st;
  const std::string dest = (outdir / f.path).string();
  const std::string partial = dest + ".partial";
  struct stat st {};
  if (::lstat(dest.c_str(), &st) == 0 && S_ISREG(st.st_mode) && (f.size || !f.sha256.empty())) {
    std::string digest;
    if (Verify(dest, f, digest).ok()) {
      out.bytes = FileSize(dest);
      out.sha256 = digest;
      out.already_present = true;
      if (o.progress) std::fprintf(stderr, "%s: already present\n", f.path.c_str());
      return out;
    }
  }
  if (f.size && FileSize(partial) > *f.size) std::remove(partial.c_str());  // stale: start over
  const std::string url = ResolveUrl(o.endpoint, o.repo, o.revision, f.path);
  ProgressBar bar(f.path, o.progress);
  absl::Status last;
  // A partial file already complete (an earlier run stopped before the rename) needs no
  // request at all: a Range starting at its end would only get HTTP 416.
  const bool complete = f.size && *f.size > 0 && FileSize(partial) == *f.size;
  for (out.attempts = complete ? 0 : 1; !complete && out.attempts <= o.max_attempts; ++out.attempts) {
    last = http.DownloadTo(url, partial, [&](uint64_t done, uint64_t total) {
      bar.Update(done, total ? total : f.size.value_or(0));
    });
    if (last.ok()) break;
    if (last.code() == absl::StatusCode::kOutOfRange) {  // the server refused our resume point
      std::remove(partial.c_str());
      continue;
    }
    if (last.code() != absl::StatusCode::kUnavailable) break;
    if (o.progress)
      std::fprintf(stderr, "\n%s: %s; resuming from byte %llu\n", f.path.c_str(), std::string(last.message()).c_str(),
                   static_cast<unsigned long long>(FileSize(partial)));
  }
  if (!complete && !last.ok()) {
    if (last.code() != absl::StatusCode::kUnavailable) std::remove(partial.c_str());
    return absl::Status(last.code(), StrCat(f.path, ": download failed after ", std::min(out.attempts, o.max_attempts),
                                            " attempt(s): ", std::string(last.message())));
  }
  std::string digest;
  if (auto v = Verify(partial, f, digest); !v.ok()) {
    std::remove(partial.c_str());  // never keep bytes that failed the check
    return v;
  }
  if (std::rename(partial.c_str(), dest.c_str()) != 0)
    return absl::PermissionDeniedError(StrCat(dest, ": cannot rename ", partial));
  out.bytes = FileSize(dest);
  out.sha256 = digest;
  bar.Done(StrCat(f.path, ": ", Mib(out.bytes), digest.empty() ? ", size checked" : ", SHA-256 ok"));
  return out;
}

absl::Status CheckOptions(const PullOptions& o) {
  if (auto st = ValidateRepoId(o.repo); !st.ok()) return st;
  if (auto st = ValidateRevision(o.revision); !st.ok()) return st;
  if (o.endpoint.rfind("http://", 0) != 0 && o.endpoint.rfind("https://", 0) != 0)
    return absl::InvalidArgumentError(StrCat("HF_ENDPOINT \"", o.endpoint, "\": must start with http:// or https://"));
  return absl::OkStatus();
}

std::string Endpoint(std::string e) {
  while (!e.empty() && e.back() == '/') e.pop_back();
  return e;
}

}  // namespace

std::vector<HubFile> SelectFiles(const std::vector<HubFile>& all, const std::vector<std::string>& includes) {
  std::vector<HubFile> out;
  if (!includes.empty()) {
    for (const auto& f : all)
      for (const auto& p : includes)
        if (::fnmatch(p.c_str(), f.path.c_str(), 0) == 0) {
          out.push_back(f);
          break;
        }
    return out;
  }
  bool have_safetensors = false;
  for (const auto& f : all) have_safetensors |= EndsWith(f.path, ".safetensors");
  for (const auto& f : all) {
    bool other = false;
    if (have_safetensors) {
      for (auto suf : kOtherWeightSuffixes) other |= EndsWith(f.path, suf);
      other |= f.path.rfind("original/", 0) == 0;
    }
    if (!other) out.push_back(f);
  }
  return out;
}

absl::Status ValidateListing(const RepoListing& listing) {
  for (const auto& f : listing.files) {
    bool ctrl = false;
    for (unsigned char c : f.path) ctrl |= c < 0x20 || c == 0x7f;
    if (!safetensors::IsSafeRelativePath(f.path) || ctrl || f.path.size() > 1024)
      return absl::PermissionDeniedError(StrCat("refusing hostile file name \"", f.path,
                                                "\" in the repository listing (absolute path, '..' or '.' component, ",
                                                "backslash or control character)"));
    if (EndsWith(f.path, ".partial"))
      return absl::PermissionDeniedError(StrCat("refusing file name \"", f.path, "\": .partial is reserved for downloads"));
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> HeaderLengthFromRange(const std::string& url, const HttpResponse& pre,
                                               std::optional<uint64_t> listed_size) {
  if ((pre.status != 206 && pre.status != 200) || pre.body.size() < 8)
    return absl::UnavailableError(StrCat(url, ": range request for the header length failed (HTTP ", pre.status, ")"));
  return safetensors::ParseHeaderLength(reinterpret_cast<const uint8_t*>(pre.body.data()), listed_size, url);
}

absl::StatusOr<safetensors::Header> HeaderFromRange(const std::string& url, const HttpResponse& head,
                                                    uint64_t header_bytes, std::optional<uint64_t> listed_size) {
  if (head.status != 206 || head.body.size() != header_bytes)
    return absl::UnavailableError(
        StrCat(url, ": range request for the ", header_bytes, "-byte header failed (HTTP ", head.status, ")"));
  std::optional<uint64_t> data_bytes;
  if (listed_size) data_bytes = *listed_size - 8 - header_bytes;  // HeaderLengthFromRange bounded it
  return safetensors::ParseHeader(head.body, data_bytes, url);
}

absl::StatusOr<PullResult> Pull(const PullOptions& opts_in) {
  PullOptions o = opts_in;
  o.endpoint = Endpoint(o.endpoint);
  if (auto st = CheckOptions(o); !st.ok()) return st;
  if (o.outdir.empty()) return absl::InvalidArgumentError("--outdir is required");
  HttpClient http({.bearer_token = o.token});
  auto listing = ListRepo(http, o.endpoint, o.repo, o.revision);
  if (!listing.ok()) return listing.status();
  if (auto st = ValidateListing(*listing); !st.ok()) return st;
  auto files = SelectFiles(listing->files, o.includes);
  if (files.empty()) return absl::NotFoundError(StrCat(o.repo, ": no file matches the --include patterns"));
  std::error_code ec;
  fs::create_directories(o.outdir, ec);
  if (ec) return absl::PermissionDeniedError(StrCat(o.outdir, ": cannot create: ", ec.message()));
  const fs::path outdir = fs::absolute(o.outdir);
  PullResult result;
  result.commit = listing->sha;
  for (const auto& f : files) {
    auto got = FetchOne(http, o, outdir, f);
    if (!got.ok()) return got.status();
    result.files.push_back(*std::move(got));
  }
  return result;
}

absl::StatusOr<DryRunReport> DryRun(const PullOptions& opts_in) {
  PullOptions o = opts_in;
  o.endpoint = Endpoint(o.endpoint);
  if (auto st = CheckOptions(o); !st.ok()) return st;
  const Preset* preset = FindPreset(o.preset);
  if (preset == nullptr)
    return absl::InvalidArgumentError(StrCat("unknown preset \"", o.preset, "\" (laptop, desktop, server, phone, none)"));
  HttpClient http({.bearer_token = o.token});
  auto listing = ListRepo(http, o.endpoint, o.repo, o.revision);
  if (!listing.ok()) return listing.status();
  if (auto st = ValidateListing(*listing); !st.ok()) return st;
  auto files = SelectFiles(listing->files, o.includes);
  DryRunReport rep;
  rep.commit = listing->sha;
  rep.preset = std::string(preset->name);
  rep.files = files.size();
  for (const auto& f : files) rep.download_bytes += f.size.value_or(0);

  auto fetch_small = [&](const std::string& path) -> absl::StatusOr<std::string> {
    const std::string url = ResolveUrl(o.endpoint, o.repo, o.revision, path);
    auto r = http.Get(url, std::nullopt, 64ull << 20);
    if (!r.ok()) return r.status();
    if (r->status != 200) return absl::UnavailableError(StrCat(url, ": HTTP ", r->status));
    return r->body;
  };
  auto find = [&](std::string_view name) -> const HubFile* {
    for (const auto& f : files)
      if (f.path == name) return &f;
    return nullptr;
  };
  if (!find("config.json"))
    return absl::NotFoundError(StrCat(o.repo, ": no config.json (not a transformers model repository, or excluded by --include)"));
  auto cfg_text = fetch_small("config.json");
  if (!cfg_text.ok()) return cfg_text.status();
  auto cfg = hf::ParseHfConfig(*cfg_text, StrCat(o.repo, "/config.json"));
  if (!cfg.ok()) return cfg.status();

  // The weight files, chosen as hf::FindWeightFiles chooses them on disk.
  std::vector<std::string> indexes, singles;
  for (const auto& f : files) {
    if (f.path.find('/') != std::string::npos) continue;
    if (EndsWith(f.path, ".safetensors.index.json")) indexes.push_back(f.path);
    else if (EndsWith(f.path, ".safetensors")) singles.push_back(f.path);
  }
  if (find("model.safetensors.index.json")) indexes = {"model.safetensors.index.json"};
  if (!indexes.empty()) {
    if (indexes.size() > 1) return absl::InvalidArgumentError(StrCat(o.repo, ": several safetensors indexes"));
    auto text = fetch_small(indexes[0]);
    if (!text.ok()) return text.status();
    auto idx = safetensors::ParseIndex(*text, StrCat(o.repo, "/", indexes[0]));
    if (!idx.ok()) return idx.status();
    rep.weight_files = idx->shards;
  } else if (find("model.safetensors")) {
    rep.weight_files = {"model.safetensors"};
  } else if (singles.size() == 1) {
    rep.weight_files = singles;
  } else {
    return absl::NotFoundError(StrCat(o.repo, ": ", singles.empty() ? "no .safetensors weights" : "several .safetensors and no index"));
  }

  std::vector<hf::TensorDesc> descs;
  uint64_t weight_bytes = 0;
  for (const auto& w : rep.weight_files) {
    const HubFile* hf = find(w);
    if (hf == nullptr) return absl::NotFoundError(StrCat(o.repo, ": weight file ", w, " is not in the listing"));
    const std::string url = ResolveUrl(o.endpoint, o.repo, o.revision, w);
    auto pre = http.Get(url, std::make_pair(uint64_t{0}, uint64_t{7}), 1 << 16);
    if (!pre.ok()) return pre.status();
    auto n = HeaderLengthFromRange(url, *pre, hf->size);
    if (!n.ok()) return n.status();
    rep.header_bytes_read += 8;
    auto head = http.Get(url, std::make_pair(uint64_t{8}, 8 + *n - 1), *n + 16);
    if (!head.ok()) return head.status();
    auto h = HeaderFromRange(url, *head, *n, hf->size);
    if (!h.ok()) return h.status();
    rep.header_bytes_read += *n;
    for (const auto& t : h->tensors) {
      descs.push_back({t.name, t.dtype, t.shape});
      const bool widen = t.dtype == safetensors::Dtype::I8 || t.dtype == safetensors::Dtype::U8;
      weight_bytes += widen ? t.bytes() * 4 : t.bytes();
    }
  }
  auto det = hf::DetectFamily(*cfg, descs);
  if (det.ok()) {
    const hf::HfArchitecture& arch = det->arch;
    rep.family = arch.family;
    rep.variant = arch.variant;
    rep.supported = arch.runnable;
    rep.reason = arch.not_runnable_reason;
  } else {
    rep.supported = false;
    rep.reason = std::string(det.status().message());
    rep.variant = cfg->model_type;
  }
  // The sliding layers as the family's graph will have them (none when the model_type
  // is not one uaii builds, or its reading fails: the report then says unsupported).
  std::vector<bool> sliding;
  if (auto reading = models::ReadHfFamily(*cfg); reading.ok()) sliding = std::move(reading->sliding_layers);
  rep.fit = EstimateFit(*cfg, sliding, weight_bytes, *preset);
  return rep;
}

}  // namespace uaii::hub
