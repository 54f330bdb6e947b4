#include "fuzz_util.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace uaii::fuzz {

std::string WriteScratch(std::string_view name, std::string_view bytes) {
  const char* tmp = std::getenv("TMPDIR");
  std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/uaii-fuzz-" + std::to_string(::getpid()) + "-" +
                     std::string(name);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) {
    std::fprintf(stderr, "fuzz: cannot write %s\n", path.c_str());
    std::abort();
  }
  return path;
}

std::string FixturePath(std::string_view relative) {
  const char* dir = std::getenv("UAII_FUZZ_FIXTURES");
  std::string base = dir && *dir ? dir : UAII_SOURCE_DIR "/build/fixtures";
  return base + "/" + std::string(relative);
}

std::string SharedDataPath(std::string_view relative) {
  return std::string(UAII_SOURCE_DIR "/../shared/data/") + std::string(relative);
}

}  // namespace uaii::fuzz
