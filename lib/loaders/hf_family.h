// Layout detection for Hugging Face checkpoints from the weight names (not from a list
// of class names): a layout table per weight layout maps each tensor to a GGUF-style
// role. No family math is decided here: config.json's model_type picks the family's
// graph and its own reading of config.json in lib/models (families.h).
// Known non-decoder or unsupported layouts are denied with a named reason; quantized
// checkpoints are rejected with the advice to convert.
#pragma once
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "loaders/hf_config.h"
#include "loaders/hf_model.h"
#include "loaders/safetensors_file.h"

namespace uaii::hf {

// The advice every quantized-checkpoint rejection carries.
inline constexpr std::string_view kConvertAdvice = "convert to dense BF16/F16 or to GGUF";

struct TensorDesc {
  std::string name;
  safetensors::Dtype dtype = safetensors::Dtype::F32;
  std::vector<int64_t> shape;
};

struct TensorRole {
  std::string role;  // "" = not part of the layout (ignored buffer, or family gpt_oss)
  bool is_bias = false;
  int32_t layer = -1;
  int32_t expert = -1;
};

struct Detection {
  HfArchitecture arch;
  std::vector<TensorRole> roles;  // parallel to the input tensors
};

// Detects the family, maps every tensor to its role, checks that each layer has the
// tensors the family needs, that shapes agree with config.json, and that the critical
// dimensions are present (errors name the config key or the tensor). Fails with:
//   - "denied: <what> (<tensor or key>)" for vision / audio / encoder-decoder / T5 / BERT /
//     Whisper / Mamba / RWKV / MLA (use GGUF) layouts;
//   - "... quantized ...: convert to dense BF16/F16 or to GGUF" for F8 / GPTQ / AWQ /
//     bitsandbytes / HQQ / MXFP4 (config quantization_config, dtypes, or names such as
//     qweight / qzeros / scales);
//   - an unknown tensor inside a recognised family (fail closed: it might change the math).
// gpt-oss is detected (family "gpt_oss") and returned with runnable = false.
absl::StatusOr<Detection> DetectFamily(const HfConfig& cfg, const std::vector<TensorDesc>& tensors);

// Only the quantization check (used first by the loader, and by `pull --dry-run`).
absl::Status CheckNotQuantized(const HfConfig& cfg, const std::vector<TensorDesc>& tensors);

}  // namespace uaii::hf
