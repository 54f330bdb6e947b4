// uaii.Model: an opened model file, shared by any number of sessions and threads.
#pragma once

#include <memory>

#include "common.h"
#include "options.h"
#include "tokenizer.h"

namespace uaii_py {

class Model {
 public:
  // path None: $UAII_MODEL, then the default model in the cache.
  explicit Model(const py::object& path);

  // The handle for a new session; raises InvalidStateError once closed.
  std::shared_ptr<ModelHandle> handle() const {
    Require(handle_, "the model");
    return handle_;
  }
  py::dict Info();
  // uaii_model_plan_json for the options `kw`, parsed.
  py::dict Plan(const SessionKwargs& kw);
  std::shared_ptr<Tokenizer> GetTokenizer();
  void Close();
  bool closed() const { return handle_ == nullptr; }

 private:
  std::shared_ptr<ModelHandle> handle_;
  py::object info_;                       // the inspect JSON as a dict, parsed once
  std::shared_ptr<Tokenizer> tokenizer_;  // made on first use
};

}  // namespace uaii_py
