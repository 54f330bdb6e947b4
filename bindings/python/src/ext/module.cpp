// The uaii._uaii extension module: ABI version check at import, C ABI failures as
// uaii.errors exceptions, and the classes of each area.
#include <string>

#include "common.h"

namespace uaii_py {
namespace {

// The library must speak the ABI this module was compiled against: same major and
// minor (the patch level may differ). `version` is encoded as UAII_CAPI_VERSION.
void CheckAbi(uint32_t version) {
  const uint32_t major = version / 10000, minor = version / 100 % 100, patch = version % 100;
  if (major == UAII_CAPI_VERSION_MAJOR && minor == UAII_CAPI_VERSION_MINOR) return;
  throw py::import_error("uaii: the loaded libuaii speaks C ABI " + std::to_string(major) + "." +
                         std::to_string(minor) + "." + std::to_string(patch) + " but this extension was built for " +
                         std::to_string(UAII_CAPI_VERSION_MAJOR) + "." + std::to_string(UAII_CAPI_VERSION_MINOR) +
                         ".x; reinstall the uaii package so that its bundled libuaii.so.0 matches (pip install "
                         "./bindings/python), or remove the other libuaii from LD_LIBRARY_PATH");
}

// CapiError -> the uaii.errors class for its status, with .status, .code and the
// engine's message.
void SetPythonError(const CapiError& e) {
  py::object errors = py::module_::import("uaii.errors");
  py::object exc = errors.attr("_from_status")(static_cast<int>(e.status), DecodeUtf8(e.message));
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
}

}  // namespace
}  // namespace uaii_py

PYBIND11_MODULE(_uaii, m) {
  using namespace uaii_py;
  CheckAbi(uaii_capi_version());
  m.doc() = "The uaii C ABI (libuaii.so.0) for Python. Import `uaii`, not this module.";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const CapiError& e) {
      SetPythonError(e);
    }
  });
  m.def("_check_abi", &CheckAbi, py::arg("version"),
        "Raises ImportError unless `version` (encoded as UAII_CAPI_VERSION) has this module's major.minor.");
  m.def("capi_version", [] { return std::string(uaii_capi_version_string()); },
        "The version of the loaded libuaii's C ABI, e.g. '0.5.0'.");
  m.attr("CAPI_VERSION") = std::to_string(UAII_CAPI_VERSION_MAJOR) + "." + std::to_string(UAII_CAPI_VERSION_MINOR) +
                           "." + std::to_string(UAII_CAPI_VERSION_PATCH);
  BindResults(m);
  BindTokenizer(m);
  BindModel(m);
  BindSampler(m);
  BindSession(m);
}
