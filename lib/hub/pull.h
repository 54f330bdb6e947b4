// File selection and listing checks of uaii::hub::Pull (uaii/hub.h).
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hub/fit.h"
#include "hub/hub_api.h"
#include "loaders/safetensors_file.h"
#include "uaii/hub.h"

namespace uaii::hub {

// Without --include: every file except weights in other formats when safetensors are
// present (*.bin, *.pth, *.pt, *.h5, *.msgpack, *.onnx, *.gguf, *.ot, original/*).
std::vector<HubFile> SelectFiles(const std::vector<HubFile>& all, const std::vector<std::string>& includes);

// Checks every listed name (the whole listing, before any download).
absl::Status ValidateListing(const RepoListing& listing);

// The dry run reads a safetensors header over HTTP in two range requests: bytes 0..7
// (the header length N, bounded by the listed file size when the listing has one),
// then bytes 8..8+N-1 (the JSON header). These check each response (status, body
// size) and parse it; pure, so the responses can be tested and fuzzed as data.
absl::StatusOr<uint64_t> HeaderLengthFromRange(const std::string& url, const HttpResponse& pre,
                                               std::optional<uint64_t> listed_size);
absl::StatusOr<safetensors::Header> HeaderFromRange(const std::string& url, const HttpResponse& head,
                                                    uint64_t header_bytes, std::optional<uint64_t> listed_size);

}  // namespace uaii::hub
