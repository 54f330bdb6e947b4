#include "loaders/model_locator.h"

#include <sys/stat.h>

#include <cstdlib>

#include "util/str_cat.h"

namespace uaii {

static std::string EnvOr(const char* name, std::string fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

std::string CacheDir() {
  std::string home = EnvOr("HOME", "/tmp");
  return EnvOr("UAII_HOME", home + "/.cache/uaii");
}

std::string DefaultModelPath() { return StrCat(CacheDir(), "/models/", kDefaultModelFile); }

absl::StatusOr<std::string> ResolveModelPath(std::string_view flag_value) {
  if (!flag_value.empty()) return std::string(flag_value);
  std::string env = EnvOr("UAII_MODEL", "");
  if (!env.empty()) return env;
  std::string def = DefaultModelPath();
  struct stat st {};
  if (::stat(def.c_str(), &st) == 0) return def;
  return absl::NotFoundError(StrCat(
      "no model given and the default model is not installed at ", def,
      ": pass --model PATH, set UAII_MODEL, or run `bash scripts/setup.sh --no-run` to install it"));
}

}  // namespace uaii
