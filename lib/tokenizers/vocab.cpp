#include "tokenizers/vocab.h"

#include <cstdio>

namespace uaii::tok {

void Vocab::BuildIndex() {
  index.clear();
  index.reserve(pieces.size());
  for (size_t i = 0; i < pieces.size(); ++i) index[pieces[i]] = static_cast<TokenId>(i);
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    byte_ids[b] = Find(name);
  }
}

}  // namespace uaii::tok
