#include "models/hparams.h"

#include <cmath>

#include "util/str_cat.h"

namespace uaii::models {

bool HParams::IsArray(const std::string& key) const {
  auto it = values_.find(key);
  return it != values_.end() && it->second.is_array;
}

absl::StatusOr<const HParams::Value*> HParams::Scalar(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) return nullptr;
  const Value& v = it->second;
  if (v.is_string || v.is_array || v.nums.size() != 1)
    return absl::InvalidArgumentError(StrCat(origin_, key, " must be a number, not ",
                                             v.is_string ? "a string" : "an array"));
  return &v;
}

absl::StatusOr<int64_t> HParams::Int(const std::string& key, int64_t dflt) const {
  auto v = Scalar(key);
  if (!v.ok()) return v.status();
  if (!*v) return dflt;
  const double x = (*v)->nums[0];
  if (x != std::floor(x) || std::fabs(x) > 9.0e15)
    return absl::InvalidArgumentError(StrCat(origin_, key, " = ", x, " must be an integer"));
  return static_cast<int64_t>(x);
}

absl::StatusOr<double> HParams::Float(const std::string& key, double dflt) const {
  auto v = Scalar(key);
  if (!v.ok()) return v.status();
  return *v ? (*v)->nums[0] : dflt;
}

absl::StatusOr<std::optional<std::vector<int64_t>>> HParams::IntArray(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) return std::optional<std::vector<int64_t>>();
  const Value& v = it->second;
  if (!v.is_array || v.is_string)
    return absl::InvalidArgumentError(StrCat(origin_, key, " must be an array"));
  std::vector<int64_t> out;
  for (double x : v.nums) {
    if (x != std::floor(x))
      return absl::InvalidArgumentError(StrCat(origin_, key, " holds ", x, ", not an integer"));
    out.push_back(static_cast<int64_t>(x));
  }
  return std::optional<std::vector<int64_t>>(std::move(out));
}

}  // namespace uaii::models
