// Shared pieces of the uaii Python extension: C ABI failures as a C++ exception that
// becomes a uaii.errors exception, and the owning wrappers around the ABI's handles.
//
// The extension uses the C ABI only (uaii.h); nothing here knows the engine's C++ types.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <string_view>

#include "uaii.h"

namespace uaii_py {

namespace py = pybind11;

// A failed ABI call: its status and the engine's message, captured on the thread that
// made the call (uaii_last_error() is per thread). Translated to uaii.errors.* in
// module.cpp.
struct CapiError {
  uaii_status status;
  std::string message;
};

// Throws CapiError when `status` is not UAII_OK. Call it right after the ABI call, on
// the same thread, so that the last error belongs to that call.
inline void Check(uaii_status status) {
  if (status != UAII_OK) throw CapiError{status, uaii_last_error()};
}

[[noreturn]] inline void Fail(uaii_status status, std::string message) {
  throw CapiError{status, std::move(message)};
}

// UTF-8 bytes -> str; bytes that are not valid UTF-8 become U+FFFD instead of failing
// (a detokenized id range may cut a character).
inline py::str DecodeUtf8(std::string_view bytes) {
  PyObject* s = PyUnicode_DecodeUTF8(bytes.data(), static_cast<Py_ssize_t>(bytes.size()), "replace");
  if (s == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(s);
}

// str -> UTF-8 bytes (a str that cannot be encoded, e.g. lone surrogates, raises
// UnicodeEncodeError).
inline std::string EncodeUtf8(const py::handle& text) {
  if (!py::isinstance<py::str>(text)) throw py::type_error("expected str");
  Py_ssize_t n = 0;
  const char* p = PyUnicode_AsUTF8AndSize(text.ptr(), &n);
  if (p == nullptr) throw py::error_already_set();
  return std::string(p, static_cast<size_t>(n));
}

// Handles are shared: a tokenizer or session keeps the model handle alive after the
// Python Model object is closed, so closing in any order is safe.
struct ModelHandle {
  uaii_model* h = nullptr;
  ~ModelHandle() { uaii_model_destroy(h); }
};

// A model's tokenizer handle keeps its model alive by itself (uaii.h).
struct TokenizerHandle {
  uaii_tokenizer* h = nullptr;
  ~TokenizerHandle() { uaii_tokenizer_destroy(h); }
};

// Raises InvalidStateError naming the object when a handle was closed.
template <typename T>
T& Require(const std::shared_ptr<T>& p, const char* what) {
  if (!p) Fail(UAII_ERR_INVALID_STATE, std::string(what) + " is closed");
  return *p;
}

// Registers the classes of each area on the module.
void BindResults(py::module_& m);
void BindModel(py::module_& m);
void BindTokenizer(py::module_& m);
void BindSession(py::module_& m);
void BindSampler(py::module_& m);

}  // namespace uaii_py
