// uaii.Sampler: the engine's sampling chain on any logits.
#include "sampler.h"

#include <pybind11/stl.h>

#include <climits>
#include <cstring>
#include <optional>

#include "model.h"
#include "request.h"
#include "tokenizer.h"

namespace uaii_py {
namespace {

class Sampler {
 public:
  Sampler(const SamplingArgs& args, const py::object& vocabulary) {
    Request r = Request::Generate(py::str(""), args);  // reads the sampling keywords as generate does
    handle_ = std::make_shared<SamplerHandle>();
    std::vector<const char*> stop;
    const uaii_generate_options o = OptionsFor(r, &stop);
    if (!r.grammar && !r.json_schema) {
      Check(uaii_sampler_create(&o, &handle_->h));
      return;
    }
    std::shared_ptr<Tokenizer> tok;
    if (py::isinstance<Model>(vocabulary)) tok = vocabulary.cast<Model&>().GetTokenizer();
    else if (py::isinstance<Tokenizer>(vocabulary)) tok = vocabulary.cast<std::shared_ptr<Tokenizer>>();
    else throw py::type_error("a grammar or json_schema needs vocabulary= (the uaii.Model or uaii.Tokenizer whose tokens it constrains)");
    Check(uaii_sampler_create_constrained(tok->handle()->h, &o, &handle_->h));
  }
  bool GrammarComplete() const { return uaii_sampler_grammar_complete(handle_->h) != 0; }
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
  m.def(
      "json_schema_to_grammar",
      [](const py::object& schema) {
        const std::string json = ToJson("schema", schema);
        char* out = nullptr;
        Check(uaii_json_schema_to_grammar(json.c_str(), &out));
        std::string gbnf(out);
        uaii_string_free(out);
        return gbnf;
      },
      py::arg("schema"),
      "The GBNF grammar (a str) for a JSON Schema (a dict or its JSON text): what json_schema= uses, to read "
      "or edit before passing it as grammar=. InvalidArgumentError for an invalid or unsupported schema.");
  py::class_<Sampler>(m, "Sampler", R"doc(
The engine's sampling chain (penalties, top_k, top_p, min_p, temperature, seeded draw)
as an object you drive over any logits: Session.eval's, Session.step's, or your own.

    uaii.Sampler(*, temperature=None, top_k=None, top_p=None, min_p=None,
                 repeat_penalty=None, presence_penalty=None, frequency_penalty=None,
                 seed=None, grammar=None, json_schema=None, vocabulary=None)

The keywords mean what they mean for Session.generate (None: the default; the
default temperature 0 is greedy). The same keywords and seed pick the tokens
Session.generate picks. With grammar (GBNF) or json_schema, give vocabulary (the
uaii.Model or uaii.Tokenizer whose ids the logits index): sample returns only tokens
the grammar allows next, and accept follows the grammar (so accept only generated
tokens). One thread at a time.
)doc")
      .def(py::init([](std::optional<double> temperature, std::optional<int64_t> top_k, std::optional<double> top_p,
                       std::optional<double> min_p, std::optional<double> repeat_penalty,
                       std::optional<double> presence_penalty, std::optional<double> frequency_penalty,
                       py::object seed, py::object grammar, py::object json_schema, py::object vocabulary) {
             return std::make_unique<Sampler>(
                 WithGrammar(MakeSamplingArgs(std::nullopt, temperature, top_k, top_p, min_p, repeat_penalty,
                                              presence_penalty, frequency_penalty, std::move(seed), py::none()),
                             std::move(grammar), std::move(json_schema)),
                 vocabulary);
           }),
           py::kw_only(), py::arg("temperature") = py::none(), py::arg("top_k") = py::none(),
           py::arg("top_p") = py::none(), py::arg("min_p") = py::none(), py::arg("repeat_penalty") = py::none(),
           py::arg("presence_penalty") = py::none(), py::arg("frequency_penalty") = py::none(),
           py::arg("seed") = py::none(), py::arg("grammar") = py::none(), py::arg("json_schema") = py::none(),
           py::arg("vocabulary") = py::none())
      .def("sample", &Sampler::Sample, py::arg("logits"),
           "Picks a token id from `logits` (a float32 buffer such as array.array('f') or a numpy array, or a "
           "sequence of numbers) without recording it. A NaN or +inf logit raises InvalidArgumentError.")
      .def("accept", &Sampler::Accept, py::arg("token"),
           "Records a token in the penalty window (a generated token, or a prompt token to penalize) and "
           "follows the grammar, if any (a token it does not allow raises InvalidArgumentError).")
      .def("reset", &Sampler::Reset,
           "Back to the state right after creation: empty window, the seed's PRNG, the grammar at its start.")
      .def_property_readonly("grammar_complete", &Sampler::GrammarComplete,
                             "True when the tokens accepted so far form a whole sentence of the grammar (False "
                             "without one).");
}

}  // namespace uaii_py
