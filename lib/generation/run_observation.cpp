#include "generation/run_observation.h"

#include <algorithm>
#include <map>

#include "storage/calibration.h"
#include "storage/cost_model.h"
#include "util/str_cat.h"

namespace uaii {

std::vector<TensorType> MatMulTypes(const runtime::SessionPlan& sp) {
  std::map<TensorType, uint64_t> type_bytes;
  for (size_t i = 0; i < sp.inputs.tensors.size(); ++i)
    if (sp.inputs.tensors[i].matmul) type_bytes[sp.tensor_types[i]] += sp.inputs.tensors[i].bytes;
  std::vector<TensorType> types;
  for (const auto& [t, b] : type_bytes) types.push_back(t);
  std::stable_sort(types.begin(), types.end(), [&](TensorType a, TensorType b) { return type_bytes[a] > type_bytes[b]; });
  return types;
}

FigureUse UseOf(const runtime::SessionPlan& sp) {
  FigureUse u;
  for (size_t i = 0; i < sp.inputs.tensors.size(); ++i)
    if (sp.inputs.tensors[i].matmul)
      (i < sp.storage.residency.size() && sp.storage.residency[i] == storage::Residency::kStreamed ? u.streamed
                                                                                                   : u.resident) = true;
  return u;
}

std::string LearnFromGeneration(const std::string& cache_dir, const std::string& model_path, const Model& model,
                                const SessionOptions& so, const StorageStats& st, const DecodeTimings& decode) {
  if (decode.steps < 1 || !(decode.seconds > 0)) return "";  // fewer than two tokens: no decode time
  auto sp = runtime::PlanSession(model, so);
  if (!sp.ok()) return "";
  const storage::StoragePlan& p = sp->storage;
  // Expert banks are not in the cost model; a plan that differs from the run's (a
  // preset that followed MemAvailable) would fit the wrong terms.
  if (p.expert_bytes > 0 || p.pinned_bytes != st.pinned_bytes || p.streamed_bytes != st.streamed_bytes) return "";
  const FigureUse use = UseOf(*sp);
  using F = storage::ObservedFigure;
  F figure = F::kResident;
  if (use.streamed) {
    // Cold or warm by where most staged bytes came from (a run that was evenly both
    // teaches neither).
    const double staged = static_cast<double>(st.direct_bytes + st.cached_bytes);
    if (!(staged > 0)) return "";
    if (st.direct_bytes >= 2.0 / 3.0 * staged)
      figure = F::kDisk;
    else if (st.cached_bytes >= 2.0 / 3.0 * staged)
      figure = F::kWarmStream;
    else
      return "";
  } else if (!use.resident) {
    return "";
  }
  const std::string key = storage::ModelCalibrationKey(model_path);
  const storage::Calibration cal = storage::LoadCachedCalibration(cache_dir, sp->threads, MatMulTypes(*sp), key);
  const double steps = static_cast<double>(decode.steps);
  const storage::RunTimings run{figure == F::kDisk, decode.seconds / steps, decode.io_wait_seconds / steps};
  const auto learned = storage::LearnFromRun(sp->inputs, sp->tensor_types, p, storage::RatesOf(cal),
                                             /*resident_interleaved=*/true, run);
  for (const auto& [f, rate] : learned)
    if (auto folded = storage::FoldObservation(cache_dir, key, sp->threads, f, rate); !folded.ok())
      return StrCat("calibration not updated: ", std::string(folded.status().message()));
  return "";
}

}  // namespace uaii
