// SHA-256 through OpenSSL's libcrypto (EVP), streaming, as lowercase hex: the one digest the
// hub (download checks), the plan cache and model identities use.
#pragma once
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace uaii {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void Update(const void* data, size_t n);
  // Lowercase hex digest; the object must not be updated afterwards.
  std::string HexDigest();

 private:
  struct Ctx;
  std::unique_ptr<Ctx> ctx_;
};

std::string Sha256Hex(std::string_view data);
// Digest of a whole file (read in 1 MiB chunks).
absl::StatusOr<std::string> FileSha256(const std::string& path);

}  // namespace uaii
