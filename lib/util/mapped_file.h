// A read-only memory mapping of a whole file. Loaders hand out views into it and
// never copy weights; the mapping lives as long as the MappedFile (shared_ptr).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace uaii {

class MappedFile {
 public:
  // Maps `path` read-only. Fails with NotFound / InvalidArgument naming the path.
  static absl::StatusOr<std::shared_ptr<const MappedFile>> Open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  MappedFile() = default;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

}  // namespace uaii
