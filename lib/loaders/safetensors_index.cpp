#include "loaders/safetensors_index.h"

#include <algorithm>
#include <set>

#include "simdjson.h"
#include "util/str_cat.h"

namespace uaii::safetensors {

bool IsSafeRelativePath(std::string_view p) {
  if (p.empty() || p.front() == '/' || p.find('\\') != std::string_view::npos || p.find('\0') != std::string_view::npos)
    return false;
  if (p.size() >= 2 && p[1] == ':') return false;  // "C:..." on Windows
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find('/', start);
    if (end == std::string_view::npos) end = p.size();
    std::string_view part = p.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

absl::StatusOr<Index> ParseIndex(std::string_view json, std::string_view origin) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (auto err = parser.parse(json.data(), json.size(), true).get(root))
    return absl::InvalidArgumentError(StrCat(origin, ": invalid JSON: ", simdjson::error_message(err)));
  Index idx;
  simdjson::dom::element meta;
  if (!root.at_key("metadata").get(meta) && meta.type() == simdjson::dom::element_type::OBJECT) {
    uint64_t total;
    if (!meta.at_key("total_size").get_uint64().get(total)) idx.total_size = total;
  }
  simdjson::dom::object map;
  if (root.at_key("weight_map").get_object().get(map))
    return absl::InvalidArgumentError(StrCat(origin, ": weight_map: missing or not an object"));
  std::set<std::string> names, shards;
  for (auto f : map) {
    std::string name(f.key.data(), f.key.size());
    std::string_view shard;
    if (f.value.get_string().get(shard))
      return absl::InvalidArgumentError(StrCat(origin, ": weight_map[\"", name, "\"]: not a string"));
    if (!IsSafeRelativePath(shard))
      return absl::InvalidArgumentError(
          StrCat(origin, ": weight_map[\"", name, "\"]: unsafe shard path \"", shard, "\""));
    if (!names.insert(name).second)
      return absl::InvalidArgumentError(StrCat(origin, ": duplicate tensor name \"", name, "\" in weight_map"));
    shards.insert(std::string(shard));
    idx.weight_map.emplace_back(std::move(name), std::string(shard));
  }
  if (idx.weight_map.empty()) return absl::InvalidArgumentError(StrCat(origin, ": weight_map is empty"));
  idx.shards.assign(shards.begin(), shards.end());
  return idx;
}

}  // namespace uaii::safetensors
