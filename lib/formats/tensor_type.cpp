// The tensor type traits table. Sizes follow ggml's type_traits (ggml.c); the
// dequantizers live in dequant_basic.cpp / dequant_k.cpp.
#include "formats/tensor_type.h"

#include <array>
#include <memory>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "formats/dequant.h"

namespace uaii {
namespace {

using T = TensorType;
namespace dq = dequant;

// Every id ggml defines today. Ids 4, 5 (Q4_2/Q4_3), 31-33 and 36-38 (the removed
// repacked Q4_0_x_x / IQ4_NL_x_x types) are gone from ggml and stay unknown here.
// Q8_1 is 36 bytes (two halves + 32 quants) as in ggml-common.h; it is an activation
// format that never appears in model files.
constexpr TensorTypeTraits kTable[] = {
    // type        name       block  bytes  dequantize
    {T::F32,      "F32",      1,     4,     dq::F32},
    {T::F16,      "F16",      1,     2,     dq::F16},
    {T::Q4_0,     "Q4_0",     32,    18,    dq::Q4_0},
    {T::Q4_1,     "Q4_1",     32,    20,    dq::Q4_1},
    {T::Q5_0,     "Q5_0",     32,    22,    dq::Q5_0},
    {T::Q5_1,     "Q5_1",     32,    24,    dq::Q5_1},
    {T::Q8_0,     "Q8_0",     32,    34,    dq::Q8_0},
    {T::Q8_1,     "Q8_1",     32,    36,    nullptr},
    {T::Q2_K,     "Q2_K",     256,   84,    dq::Q2_K},
    {T::Q3_K,     "Q3_K",     256,   110,   dq::Q3_K},
    {T::Q4_K,     "Q4_K",     256,   144,   dq::Q4_K},
    {T::Q5_K,     "Q5_K",     256,   176,   dq::Q5_K},
    {T::Q6_K,     "Q6_K",     256,   210,   dq::Q6_K},
    {T::Q8_K,     "Q8_K",     256,   292,   dq::Q8_K},
    {T::IQ2_XXS,  "IQ2_XXS",  256,   66,    nullptr},
    {T::IQ2_XS,   "IQ2_XS",   256,   74,    nullptr},
    {T::IQ3_XXS,  "IQ3_XXS",  256,   98,    nullptr},
    {T::IQ1_S,    "IQ1_S",    256,   50,    nullptr},
    {T::IQ4_NL,   "IQ4_NL",   32,    18,    nullptr},
    {T::IQ3_S,    "IQ3_S",    256,   110,   nullptr},
    {T::IQ2_S,    "IQ2_S",    256,   82,    nullptr},
    {T::IQ4_XS,   "IQ4_XS",   256,   136,   nullptr},
    {T::I8,       "I8",       1,     1,     nullptr},
    {T::I16,      "I16",      1,     2,     nullptr},
    {T::I32,      "I32",      1,     4,     nullptr},
    {T::I64,      "I64",      1,     8,     nullptr},
    {T::F64,      "F64",      1,     8,     nullptr},
    {T::IQ1_M,    "IQ1_M",    256,   56,    nullptr},
    {T::BF16,     "BF16",     1,     2,     dq::BF16},
    {T::TQ1_0,    "TQ1_0",    256,   54,    nullptr},
    {T::TQ2_0,    "TQ2_0",    256,   66,    nullptr},
    {T::MXFP4,    "MXFP4",    32,    17,    nullptr},
    {T::NVFP4,    "NVFP4",    64,    36,    nullptr},
    {T::Q1_0,     "Q1_0",     128,   18,    nullptr},
};

constexpr size_t kMaxId = 64;

// Dense id -> traits index, built at compile time.
constexpr std::array<int, kMaxId> BuildIndex() {
  std::array<int, kMaxId> index{};
  for (auto& i : index) i = -1;
  for (size_t i = 0; i < std::size(kTable); ++i) {
    index[static_cast<size_t>(kTable[i].type)] = static_cast<int>(i);
  }
  return index;
}
constexpr std::array<int, kMaxId> kIndex = BuildIndex();

// Every row has a name and positive sizes.
constexpr bool TableIsSane() {
  for (const auto& t : kTable) {
    if (t.block_size <= 0 || t.type_size <= 0 || t.name.empty()) return false;
  }
  return true;
}
static_assert(TableIsSane());

}  // namespace

const TensorTypeTraits* FindTensorType(uint32_t id) {
  if (id >= kMaxId || kIndex[id] < 0) return nullptr;
  return &kTable[kIndex[id]];
}

std::string_view TensorTypeName(uint32_t id) {
  if (const TensorTypeTraits* t = FindTensorType(id)) return t->name;
  // Unknown ids come from (possibly corrupt) files; keep one stable string per id so
  // the returned view stays valid for the life of the process.
  static std::mutex mu;
  static auto* names = new absl::flat_hash_map<uint32_t, std::unique_ptr<std::string>>();
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = (*names)[id];
  if (!slot) slot = std::make_unique<std::string>(absl::StrCat("type#", id));
  return *slot;
}

absl::Status CheckSupported(uint32_t id, std::string_view tensor_name) {
  // Debian's Abseil has its own string_view type: convert explicitly.
  const auto av = [](std::string_view s) { return absl::string_view(s.data(), s.size()); };
  const TensorTypeTraits* t = FindTensorType(id);
  if (t == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unsupported tensor type ", av(TensorTypeName(id)), " in ", av(tensor_name)));
  }
  if (t->dequantize == nullptr) {
    return absl::UnimplementedError(absl::StrCat(
        "unsupported tensor type ", av(t->name), " in ", av(tensor_name)));
  }
  return absl::OkStatus();
}

std::optional<uint64_t> RowBytes(const TensorTypeTraits& t, uint64_t n) {
  const uint64_t bs = static_cast<uint64_t>(t.block_size);
  const uint64_t ts = static_cast<uint64_t>(t.type_size);
  if (n % bs != 0) return std::nullopt;
  const uint64_t blocks = n / bs;
  uint64_t bytes;
  if (__builtin_mul_overflow(blocks, ts, &bytes)) return std::nullopt;
  return bytes;
}

}  // namespace uaii
