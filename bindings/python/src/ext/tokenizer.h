// uaii.Tokenizer: a model's tokenizer or one opened alone.
#pragma once

#include <memory>

#include "common.h"

namespace uaii_py {

class Tokenizer {
 public:
  explicit Tokenizer(std::shared_ptr<TokenizerHandle> handle) : handle_(std::move(handle)) {}
  // Opens a GGUF file or a directory of tokenizer files.
  static std::shared_ptr<Tokenizer> Open(const py::object& path);

  py::list Encode(const py::object& text, bool add_special, bool parse_special) const;
  py::str Decode(const py::iterable& ids, bool skip_special) const;
  size_t VocabSize() const;
  void Close() { handle_.reset(); }
  // The handle (raises InvalidStateError once closed).
  const std::shared_ptr<TokenizerHandle>& handle() const {
    Require(handle_, "the tokenizer");
    return handle_;
  }
  bool closed() const { return handle_ == nullptr; }

 private:
  std::shared_ptr<TokenizerHandle> handle_;
};

}  // namespace uaii_py
