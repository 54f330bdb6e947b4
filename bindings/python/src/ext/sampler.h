// uaii.Sampler over uaii_sampler_* (the C ABI's token-level calls), and the conversion
// of Python logits (a buffer of float32, or any sequence of numbers) to floats.
#pragma once

#include <memory>
#include <vector>

#include "common.h"

namespace uaii_py {

struct SamplerHandle {
  uaii_sampler* h = nullptr;
  ~SamplerHandle() { uaii_sampler_destroy(h); }
};

// The sampler behind a uaii.Sampler object (for Session.step).
std::shared_ptr<SamplerHandle> SamplerOf(const py::object& sampler);

// Logits from a float32 buffer (array.array('f'), a numpy float32 array) without a
// second pass over Python objects, else from a sequence of numbers.
std::vector<float> LogitsFrom(const py::object& logits);


}  // namespace uaii_py
