// Content hashes for the plan cache (SHA-256, util/sha256.h).
#pragma once
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "formats/gguf_file.h"
#include "util/sha256.h"

namespace uaii::planner {

// A GGUF model's identity without reading its weights: the header, every metadata
// key/value and the tensor table (names, types, shapes, offsets) — the bytes before
// the data section. Two files that differ there get different hashes; a change to
// weight bytes alone does not (the plan depends only on what is hashed).
std::string GgufContentHash(const gguf::File& f);

}  // namespace uaii::planner
