#include "planner/content_hash.h"

#include <algorithm>

#include "util/sha256.h"

namespace uaii::planner {

std::string GgufContentHash(const gguf::File& f) {
  const auto& m = f.mapping();
  const size_t n = std::min<size_t>(f.data_offset(), m->size());
  return Sha256Hex(std::string_view(reinterpret_cast<const char*>(m->data()), n));
}

}  // namespace uaii::planner
