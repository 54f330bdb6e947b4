#include "runtime/weight_source.h"

namespace uaii::runtime {

bool IsMatmulWeightInput(const std::string& op_type, size_t input) {
  return (op_type == "matmul" && input == 1) || (op_type == "norm_linear" && input >= 2);
}

}  // namespace uaii::runtime
