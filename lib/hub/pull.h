// File selection and listing checks of uaii::hub::Pull (uaii/hub.h).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hub/fit.h"
#include "hub/hub_api.h"
#include "uaii/hub.h"

namespace uaii::hub {

// Without --include: every file except weights in other formats when safetensors are
// present (*.bin, *.pth, *.pt, *.h5, *.msgpack, *.onnx, *.gguf, *.ot, original/*).
std::vector<HubFile> SelectFiles(const std::vector<HubFile>& all, const std::vector<std::string>& includes);

// Checks every listed name (the whole listing, before any download).
absl::Status ValidateListing(const RepoListing& listing);

}  // namespace uaii::hub
