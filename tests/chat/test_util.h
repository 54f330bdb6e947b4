// Helpers shared by the chat test files: reading files and goldens.
#pragma once
#include <fstream>
#include <sstream>
#include <string>

#include "chat/json.h"

namespace uaii::jinja::testing {

inline std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline bool FileExists(const std::string& path) { return std::ifstream(path).good(); }

inline std::string SourceDir() { return UAII_SOURCE_DIR; }
inline std::string SharedDir() { return SourceDir() + "/../shared"; }

inline const Value* Field(const Value& dict, const char* key) { return dict.is_dict() ? dict.dict->Find(std::string_view(key)) : nullptr; }

}  // namespace uaii::jinja::testing
