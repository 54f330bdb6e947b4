// The plan figures a calibration depends on (the public half, LearnFromGeneration, is
// in uaii/calibration.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "formats/tensor_type.h"
#include "runtime/session_plan.h"
#include "uaii/calibration.h"

namespace uaii {

// The model's matmul weight types, most bytes first: the calibration measures each
// through MatMul at the run's thread count (cached per CPU, threads, kernel version).
std::vector<TensorType> MatMulTypes(const runtime::SessionPlan& sp);

// Which figures a prediction depends on: the disk (cold) or the warm streaming rate
// (warm) when matmul weights stream, the resident rate when some stay resident.
struct FigureUse {
  bool streamed = false, resident = false;
};
FigureUse UseOf(const runtime::SessionPlan& sp);

}  // namespace uaii
