// uaii.Model over uaii_model_open / uaii_model_inspect_json / uaii_model_plan_json /
// uaii_model_tokenizer.
#include "model.h"

#include <pybind11/stl.h>

#include <string>

#include "options.h"

namespace uaii_py {

Model::Model(const py::object& path) {
  std::string p;
  if (!path.is_none()) p = EncodeUtf8(py::module_::import("os").attr("fspath")(path));
  auto handle = std::make_shared<ModelHandle>();
  uaii_status st;
  std::string error;
  {
    py::gil_scoped_release nogil;  // opening reads and validates the file
    st = uaii_model_open(path.is_none() ? nullptr : p.c_str(), nullptr, &handle->h);
    if (st != UAII_OK) error = uaii_last_error();
  }
  if (st != UAII_OK) Fail(st, error);
  handle_ = std::move(handle);
}

py::dict Model::Info() {
  if (info_) return py::dict(py::module_::import("copy").attr("deepcopy")(info_));
  const ModelHandle& m = Require(handle_, "the model");
  char* json = nullptr;
  uaii_status st;
  std::string error;
  {
    py::gil_scoped_release nogil;
    st = uaii_model_inspect_json(m.h, &json);
    if (st != UAII_OK) error = uaii_last_error();
  }
  if (st != UAII_OK) Fail(st, error);
  std::unique_ptr<char, decltype(&uaii_string_free)> owned(json, &uaii_string_free);
  info_ = py::module_::import("json").attr("loads")(DecodeUtf8(json));
  // A copy each time: callers may edit what they get without changing the model's.
  return py::dict(py::module_::import("copy").attr("deepcopy")(info_));
}

py::dict Model::Plan(const SessionKwargs& kw) {
  const ModelHandle& m = Require(handle_, "the model");
  const uaii_session_options o = SessionOptionsFrom(kw);
  char* json = nullptr;
  uaii_status st;
  std::string error;
  {
    py::gil_scoped_release nogil;  // may measure the calibration (about a second)
    st = uaii_model_plan_json(m.h, &o, &json);
    if (st != UAII_OK) error = uaii_last_error();
  }
  if (st != UAII_OK) Fail(st, error);
  std::unique_ptr<char, decltype(&uaii_string_free)> owned(json, &uaii_string_free);
  return py::module_::import("json").attr("loads")(DecodeUtf8(json));
}

std::shared_ptr<Tokenizer> Model::GetTokenizer() {
  if (tokenizer_ && !tokenizer_->closed()) return tokenizer_;
  const ModelHandle& m = Require(handle_, "the model");
  auto t = std::make_shared<TokenizerHandle>();
  Check(uaii_model_tokenizer(m.h, &t->h));
  tokenizer_ = std::make_shared<Tokenizer>(std::move(t));
  return tokenizer_;
}

void Model::Close() {
  // Sessions and tokenizers made from the model hold the handle and keep working.
  handle_.reset();
}

void BindModel(py::module_& m) {
  py::class_<Model, std::shared_ptr<Model>>(m, "Model", R"doc(
A model opened from a GGUF file (or a Hugging Face directory where supported).

``uaii.Model()`` with no path opens $UAII_MODEL, then the default model in the cache
($UAII_HOME, default ~/.cache/uaii). A model may be shared by any number of sessions
and threads. Use it as a context manager or call close(); sessions and tokenizers
already made from it keep working after it is closed.
)doc")
      .def(py::init<const py::object&>(), py::arg("path") = py::none(),
           "Opens the model at `path` (str or os.PathLike; None: $UAII_MODEL, then the default model).")
      .def_property_readonly("info", &Model::Info,
                             "The model's description (the `uaii inspect --json` document) as a dict.")
      .def(
          "plan",
          [](Model& self, std::optional<std::string> preset, std::optional<double> ram_gb,
             std::optional<int64_t> kv_window, std::optional<int64_t> threads, std::string device,
             std::optional<int64_t> max_context, std::optional<int64_t> moe_top_k, bool moe_prefetch,
             std::optional<int64_t> device_memory_bytes) {
            SessionKwargs kw{std::move(preset), ram_gb, kv_window, threads, std::move(device), max_context,
                             moe_top_k, moe_prefetch, false};
            kw.device_memory_bytes = device_memory_bytes;
            return self.Plan(kw);
          },
          py::kw_only(), py::arg("preset") = py::none(), py::arg("ram_gb") = py::none(),
          py::arg("kv_window") = py::none(), py::arg("threads") = py::none(), py::arg("device") = "cpu",
          py::arg("max_context") = py::none(), py::arg("moe_top_k") = py::none(), py::arg("moe_prefetch") = false,
          py::arg("device_memory_bytes") = py::none(),
          "The memory plan a Session with these options would run with, and its predicted decode speed, "
          "reading no weights: the `uaii generate --dry-run --json` document as a dict.")
      .def_property_readonly("tokenizer", &Model::GetTokenizer, "The model's tokenizer (uaii.Tokenizer).")
      .def_property_readonly("closed", &Model::closed, "True after close().")
      .def("close", &Model::Close, "Releases the model (idempotent); later calls on it raise InvalidStateError.")
      .def("__enter__", [](std::shared_ptr<Model> self) { return self; })
      .def("__exit__", [](Model& self, py::args) { self.Close(); })
      .def("__repr__", [](Model& self) -> py::str {
        if (self.closed()) return py::str("<uaii.Model closed>");
        py::dict info = self.Info();
        return py::str("<uaii.Model {!r}>").format(info.contains("path") ? info["path"] : py::str("?"));
      });
}

}  // namespace uaii_py
