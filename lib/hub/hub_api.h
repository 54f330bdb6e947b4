// The Hugging Face Hub's HTTP API, the part `uaii pull` needs:
//   GET {endpoint}/api/models/{repo}/revision/{rev}?blobs=true
//       -> {"sha": ..., "siblings": [{"rfilename": ..., "size": N, "lfs": {"sha256": ..., "size": N}}]}
//   GET {endpoint}/{repo}/resolve/{rev}/{file}          (the file; Range honoured)
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hub/http.h"
#include "uaii/hub.h"

namespace uaii::hub {

inline constexpr std::string_view kDefaultEndpoint = kDefaultHubEndpoint;

struct HubFile {
  std::string path;               // rfilename, as the Hub lists it (validated by the caller)
  std::optional<uint64_t> size;   // lfs.size, else size, when the listing has it
  std::string sha256;             // lfs.sha256 (lowercase hex), "" for non-LFS files
};

struct RepoListing {
  std::string sha;                // the commit the revision resolved to ("" if not given)
  std::vector<HubFile> files;
};

// "org/name" (or "name"): letters, digits, '-', '_', '.'; no "..", at most one '/'.
absl::Status ValidateRepoId(const std::string& repo);
// A branch, tag, commit or "refs/pr/N": no whitespace, control characters or "..".
absl::Status ValidateRevision(const std::string& rev);

std::string ResolveUrl(const std::string& endpoint, const std::string& repo, const std::string& rev,
                       const std::string& file);

absl::StatusOr<RepoListing> ListRepo(HttpClient& http, const std::string& endpoint, const std::string& repo,
                                     const std::string& rev);

// The listing API's response (status, then the body as ParseListing reads it): pure,
// for tests and the fuzzer.
absl::StatusOr<RepoListing> ListingFromResponse(const HttpResponse& r, const std::string& url,
                                                const std::string& repo, const std::string& rev);

// Parses the listing JSON (exposed for tests).
absl::StatusOr<RepoListing> ParseListing(const std::string& json, const std::string& origin);

}  // namespace uaii::hub
