#include "hub/hub_api.h"

#include <cctype>

#include "simdjson.h"
#include "util/str_cat.h"

namespace uaii::hub {

absl::Status ValidateRepoId(const std::string& repo) {
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(StrCat("repository id \"", repo, "\": ", why, " (expected org/name)"));
  };
  if (repo.empty() || repo.size() > 200) return bad("empty or too long");
  int slashes = 0;
  for (char c : repo) {
    if (c == '/') ++slashes;
    else if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') return bad("invalid character");
  }
  if (slashes > 1 || repo.front() == '/' || repo.back() == '/' || repo.find("..") != std::string::npos ||
      repo.front() == '.' || repo.find("/.") != std::string::npos)
    return bad("invalid form");
  return absl::OkStatus();
}

absl::Status ValidateRevision(const std::string& rev) {
  if (rev.empty() || rev.size() > 256 || rev.find("..") != std::string::npos)
    return absl::InvalidArgumentError(StrCat("revision \"", rev, "\": invalid"));
  for (char c : rev)
    if (std::iscntrl(static_cast<unsigned char>(c)) || std::isspace(static_cast<unsigned char>(c)))
      return absl::InvalidArgumentError(StrCat("revision \"", rev, "\": invalid character"));
  return absl::OkStatus();
}

std::string ResolveUrl(const std::string& endpoint, const std::string& repo, const std::string& rev,
                       const std::string& file) {
  return StrCat(endpoint, "/", repo, "/resolve/", UrlEncodeSegment(rev), "/", UrlEncodePath(file));
}

absl::StatusOr<RepoListing> ParseListing(const std::string& json, const std::string& origin) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (auto err = parser.parse(json).get(root))
    return absl::InvalidArgumentError(StrCat(origin, ": invalid JSON: ", simdjson::error_message(err)));
  RepoListing out;
  std::string_view sha;
  if (!root["sha"].get_string().get(sha)) out.sha = std::string(sha);
  simdjson::dom::array siblings;
  if (root["siblings"].get_array().get(siblings))
    return absl::InvalidArgumentError(StrCat(origin, ": no \"siblings\" list"));
  for (simdjson::dom::element s : siblings) {
    HubFile f;
    std::string_view name;
    if (s["rfilename"].get_string().get(name))
      return absl::InvalidArgumentError(StrCat(origin, ": a sibling without rfilename"));
    f.path = std::string(name);
    uint64_t size;
    if (!s["size"].get_uint64().get(size)) f.size = size;
    simdjson::dom::element lfs;
    if (!s["lfs"].get(lfs) && lfs.is_object()) {
      std::string_view h;
      if (!lfs["sha256"].get_string().get(h)) {
        f.sha256 = std::string(h);
        for (char& c : f.sha256) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        bool hex = f.sha256.size() == 64;
        for (char c : f.sha256) hex &= std::isxdigit(static_cast<unsigned char>(c)) != 0;
        if (!hex) return absl::InvalidArgumentError(StrCat(origin, ": ", f.path, ": lfs.sha256 is not a SHA-256"));
      }
      if (!lfs["size"].get_uint64().get(size)) f.size = size;
    }
    out.files.push_back(std::move(f));
  }
  return out;
}

absl::StatusOr<RepoListing> ListRepo(HttpClient& http, const std::string& endpoint, const std::string& repo,
                                     const std::string& rev) {
  const std::string url =
      StrCat(endpoint, "/api/models/", repo, "/revision/", UrlEncodeSegment(rev), "?blobs=true");
  auto r = http.Get(url, std::nullopt, 64ull << 20);
  if (!r.ok()) return r.status();
  return ListingFromResponse(*r, url, repo, rev);
}

absl::StatusOr<RepoListing> ListingFromResponse(const HttpResponse& r, const std::string& url,
                                                const std::string& repo, const std::string& rev) {
  if (r.status == 401 || r.status == 403)
    return absl::PermissionDeniedError(StrCat(url, ": HTTP ", r.status, " (gated or private repository: set HF_TOKEN)"));
  if (r.status == 404)
    return absl::NotFoundError(StrCat(url, ": HTTP 404 (no repository ", repo, " at revision ", rev, ")"));
  if (r.status != 200) return absl::UnavailableError(StrCat(url, ": HTTP ", r.status));
  return ParseListing(r.body, url);
}

}  // namespace uaii::hub
