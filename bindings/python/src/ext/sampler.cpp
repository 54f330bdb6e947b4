// uaii.Sampler: the engine's sampling chain on any logits.
#include "sampler.h"

#include <pybind11/stl.h>

#include <climits>
#include <cstring>
#include <optional>

#include "request.h"

namespace uaii_py {
namespace {

class Sampler {
 public:
  explicit Sampler(const SamplingArgs& args) {
    Request r = Request::Generate(py::str(""), args);  // reads the sampling keywords as generate does
    handle_ = std::make_shared<SamplerHandle>();
    Check(uaii_sampler_create(&r.options, &handle_->h));
  }
  int32_t Sample(const py::object& logits) {
    const std::vector<float> v = LogitsFrom(logits);
    int32_t t = -1;
    Check(uaii_sampler_sample(handle_->h, v.data(), v.size(), &t));
    return t;
  }
  void Accept(int64_t token) {
    if (token < 0 || token > INT32_MAX) Fail(UAII_ERR_INVALID_ARGUMENT, "token " + std::to_string(token) + " is out of range");
    Check(uaii_sampler_accept(handle_->h, static_cast<int32_t>(token)));
  }
  void Reset() { Check(uaii_sampler_reset(handle_->h)); }
  const std::shared_ptr<SamplerHandle>& handle() const { return handle_; }

 private:
  std::shared_ptr<SamplerHandle> handle_;
};

}  // namespace

std::shared_ptr<SamplerHandle> SamplerOf(const py::object& sampler) {
  if (!py::isinstance<Sampler>(sampler)) throw py::type_error("sampler must be a uaii.Sampler");
  return sampler.cast<Sampler&>().handle();
}

std::vector<float> LogitsFrom(const py::object& logits) {
  if (PyObject_CheckBuffer(logits.ptr())) {
    py::buffer_info b = py::reinterpret_borrow<py::buffer>(logits).request();
    if (b.format == py::format_descriptor<float>::format() && b.ndim == 1 && b.strides[0] == sizeof(float)) {
      std::vector<float> v(static_cast<size_t>(b.size));
      if (!v.empty()) std::memcpy(v.data(), b.ptr, v.size() * sizeof(float));
      return v;
    }
  }
  if (!py::isinstance<py::sequence>(logits)) throw py::type_error("logits must be a float32 buffer or a sequence of numbers");
  std::vector<float> v;
  for (const py::handle& x : py::reinterpret_borrow<py::sequence>(logits)) v.push_back(x.cast<float>());
  return v;
}

void BindSampler(py::module_& m) {
  py::class_<Sampler>(m, "Sampler", R"doc(
The engine's sampling chain (penalties, top_k, top_p, min_p, temperature, seeded draw)
as an object you drive over any logits: Session.eval's, Session.step's, or your own.

    uaii.Sampler(*, temperature=None, top_k=None, top_p=None, min_p=None,
                 repeat_penalty=None, presence_penalty=None, frequency_penalty=None,
                 seed=None)

The keywords mean what they mean for Session.generate (None: the default; the
default temperature 0 is greedy). The same keywords and seed pick the tokens
Session.generate picks. One thread at a time.
)doc")
      .def(py::init([](std::optional<double> temperature, std::optional<int64_t> top_k, std::optional<double> top_p,
                       std::optional<double> min_p, std::optional<double> repeat_penalty,
                       std::optional<double> presence_penalty, std::optional<double> frequency_penalty,
                       py::object seed) {
             return std::make_unique<Sampler>(MakeSamplingArgs(std::nullopt, temperature, top_k, top_p, min_p,
                                                               repeat_penalty, presence_penalty, frequency_penalty,
                                                               std::move(seed), py::none()));
           }),
           py::kw_only(), py::arg("temperature") = py::none(), py::arg("top_k") = py::none(),
           py::arg("top_p") = py::none(), py::arg("min_p") = py::none(), py::arg("repeat_penalty") = py::none(),
           py::arg("presence_penalty") = py::none(), py::arg("frequency_penalty") = py::none(),
           py::arg("seed") = py::none())
      .def("sample", &Sampler::Sample, py::arg("logits"),
           "Picks a token id from `logits` (a float32 buffer such as array.array('f') or a numpy array, or a "
           "sequence of numbers) without recording it. A NaN or +inf logit raises InvalidArgumentError.")
      .def("accept", &Sampler::Accept, py::arg("token"),
           "Records a token in the penalty window (a generated token, or a prompt token to penalize).")
      .def("reset", &Sampler::Reset, "Back to the state right after creation: empty window, the seed's PRNG.");
}

}  // namespace uaii_py
