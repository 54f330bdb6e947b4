// HParams: a model's hyper-parameters under one vocabulary, GGUF's key names without
// the `<arch>.` prefix ("attention.sliding_window_pattern", "rope.freq_base_swa"). A
// GGUF file fills it from its `<arch>.*` metadata; other sources map their keys onto
// the same names. Each family reads the keys only it uses in its own builder file, with
// llama.cpp's defaults, so a key's meaning lives in one place.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace uaii::models {

class HParams {
 public:
  // A scalar is an array of one element; strings are kept apart from numbers.
  struct Value {
    std::vector<double> nums;
    std::string str;
    bool is_string = false;
    bool is_array = false;
  };

  // `origin` prefixes errors ("model.gguf: GGUF metadata gemma3."); a key follows it.
  explicit HParams(std::string origin = {}) : origin_(std::move(origin)) {}

  void Set(const std::string& key, Value v) { values_[key] = std::move(v); }
  void SetNumber(const std::string& key, double v) { values_[key] = Value{{v}, {}, false, false}; }
  void SetNumbers(const std::string& key, std::vector<double> v) { values_[key] = Value{std::move(v), {}, false, true}; }
  bool Has(const std::string& key) const { return values_.count(key) > 0; }
  bool IsArray(const std::string& key) const;

  // `dflt` when absent; an error naming the key when it holds a string or an array.
  absl::StatusOr<int64_t> Int(const std::string& key, int64_t dflt) const;
  absl::StatusOr<double> Float(const std::string& key, double dflt) const;
  // The array's elements as integers; nullopt when absent; an error for a scalar,
  // a string or a non-integer element.
  absl::StatusOr<std::optional<std::vector<int64_t>>> IntArray(const std::string& key) const;

  const std::string& origin() const { return origin_; }

 private:
  absl::StatusOr<const Value*> Scalar(const std::string& key) const;
  std::string origin_;
  std::map<std::string, Value> values_;
};

}  // namespace uaii::models
