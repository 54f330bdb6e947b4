#include "util/sha256.h"

#include <openssl/evp.h>

#include <cstdio>
#include <vector>

#include "util/str_cat.h"

namespace uaii {

struct Sha256::Ctx {
  EVP_MD_CTX* md = nullptr;
};

Sha256::Sha256() : ctx_(new Ctx) {
  ctx_->md = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx_->md, EVP_sha256(), nullptr);
}

Sha256::~Sha256() { EVP_MD_CTX_free(ctx_->md); }

void Sha256::Update(const void* data, size_t n) { EVP_DigestUpdate(ctx_->md, data, n); }

std::string Sha256::HexDigest() {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx_->md, out, &len);
  static const char* kHex = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < len; ++i) {
    hex.push_back(kHex[out[i] >> 4]);
    hex.push_back(kHex[out[i] & 15]);
  }
  return hex;
}

std::string Sha256Hex(std::string_view data) {
  Sha256 h;
  h.Update(data.data(), data.size());
  return h.HexDigest();
}

absl::StatusOr<std::string> FileSha256(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return absl::NotFoundError(StrCat(path, ": cannot open"));
  Sha256 h;
  std::vector<char> buf(1 << 20);
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) h.Update(buf.data(), n);
  const bool err = std::ferror(f);
  std::fclose(f);
  if (err) return absl::DataLossError(StrCat(path, ": read error"));
  return h.HexDigest();
}

}  // namespace uaii
