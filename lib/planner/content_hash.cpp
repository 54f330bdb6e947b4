#include "planner/content_hash.h"

#include <openssl/evp.h>

#include <memory>

namespace uaii::planner {

std::string Sha256Hex(std::string_view bytes) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  EVP_DigestUpdate(ctx.get(), bytes.data(), bytes.size());
  EVP_DigestFinal_ex(ctx.get(), md, &n);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < n; ++i) {
    out += kHex[md[i] >> 4];
    out += kHex[md[i] & 15];
  }
  return out;
}

std::string GgufContentHash(const gguf::File& f) {
  const auto& m = f.mapping();
  const size_t n = std::min<size_t>(f.data_offset(), m->size());
  return Sha256Hex(std::string_view(reinterpret_cast<const char*>(m->data()), n));
}

}  // namespace uaii::planner
