// The Hugging Face pull client's reading of what a server sends (lib/hub), fed as data
// with no network: the listing API's response (status and JSON body: ListingFromResponse),
// the listing's file names (ValidateListing: nothing may land outside --outdir) and the
// file selection, a download's final status (DownloadStatusError), and the dry run's
// two range responses for a safetensors header (HeaderLengthFromRange, HeaderFromRange).
// Redirects and headers are libcurl's (http.cpp: http/https only, at most 10 hops, the
// token not sent to another host). Input (FuzzedDataProvider): statuses, a listed size,
// the header-length and header bodies, include patterns, then the listing JSON.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <fuzzer/FuzzedDataProvider.h>

#include "hub/http.h"
#include "hub/hub_api.h"
#include "hub/pull.h"
#include "loaders/safetensors_index.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace uaii;
  using namespace uaii::hub;
  FuzzedDataProvider in(data, size);
  const std::string url = "https://hub.invalid/org/model/resolve/main/model.safetensors";
  constexpr long kStatuses[] = {200, 206, 0, 301, 401, 403, 404, 416, 500};
  auto status = [&] { return kStatuses[in.ConsumeIntegralInRange<size_t>(0, std::size(kStatuses) - 1)]; };

  (void)DownloadStatusError(url, in.ConsumeBool() ? status() : in.ConsumeIntegral<int32_t>());

  std::optional<uint64_t> listed;
  if (in.ConsumeBool()) listed = in.ConsumeIntegral<uint64_t>() >> in.ConsumeIntegralInRange(0, 63);
  HttpResponse pre{status(), in.ConsumeRandomLengthString(16)};
  if (auto n = HeaderLengthFromRange(url, pre, listed); n.ok()) {
    HttpResponse head{status(), in.ConsumeRandomLengthString(4096)};
    if (in.ConsumeBool()) head.body.resize(std::min<uint64_t>(*n, 1u << 16), ' ');
    (void)HeaderFromRange(url, head, *n, listed);
  }

  std::vector<std::string> includes;
  for (int i = in.ConsumeIntegralInRange(0, 3); i > 0; --i) includes.push_back(in.ConsumeRandomLengthString(16));
  HttpResponse listing_response{in.ConsumeBool() ? 200 : status(), in.ConsumeRemainingBytesAsString()};
  auto listing = ListingFromResponse(listing_response, "https://hub.invalid/api/models/org/model", "org/model", "main");
  if (!listing.ok() || !ValidateListing(*listing).ok()) return 0;
  // Contract: a listing that passed ValidateListing names only paths safe to join to --outdir.
  for (const HubFile& f : listing->files) {
    if (!safetensors::IsSafeRelativePath(f.path)) {
      std::fprintf(stderr, "fuzz_hub: ValidateListing accepted the unsafe path \"%s\"\n", f.path.c_str());
      std::abort();
    }
  }
  for (const HubFile& f : SelectFiles(listing->files, includes))
    (void)ResolveUrl(std::string(kDefaultEndpoint), "org/model", "main", f.path);
  return 0;
}
