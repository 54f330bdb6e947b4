// uaii.Tokenizer over uaii_tokenize / uaii_detokenize (the buffer rule: try a guess,
// retry once with the size the library says it needs).
#include "tokenizer.h"

#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <vector>

namespace uaii_py {

std::shared_ptr<Tokenizer> Tokenizer::Open(const py::object& path) {
  std::string p = EncodeUtf8(py::module_::import("os").attr("fspath")(path));
  auto handle = std::make_shared<TokenizerHandle>();
  uaii_status st;
  std::string error;
  {
    py::gil_scoped_release nogil;  // loading reads the file
    st = uaii_tokenizer_open(p.c_str(), &handle->h);
    if (st != UAII_OK) error = uaii_last_error();
  }
  if (st != UAII_OK) Fail(st, error);
  return std::make_shared<Tokenizer>(std::move(handle));
}

py::list Tokenizer::Encode(const py::object& text, bool add_special, bool parse_special) const {
  const TokenizerHandle& t = Require(handle_, "the tokenizer");
  std::string utf8 = EncodeUtf8(text);
  uint32_t flags = (add_special ? uint32_t{UAII_TOKENIZE_ADD_SPECIAL} : 0u) |
                   (parse_special ? uint32_t{UAII_TOKENIZE_PARSE_SPECIAL} : 0u);
  std::vector<int32_t> ids(utf8.size() + 8);  // most tokenizers give at most one id per byte (+ BOS/EOS)
  size_t n = 0;
  uaii_status st;
  std::string error;
  {
    py::gil_scoped_release nogil;
    st = uaii_tokenize(t.h, utf8.data(), utf8.size(), flags, ids.data(), ids.size(), &n);
    if (st == UAII_ERR_BUFFER_TOO_SMALL) {
      ids.resize(n);
      st = uaii_tokenize(t.h, utf8.data(), utf8.size(), flags, ids.data(), ids.size(), &n);
    }
    if (st != UAII_OK) error = uaii_last_error();
  }
  if (st != UAII_OK) Fail(st, error);
  py::list out(n);
  for (size_t i = 0; i < n; ++i) out[i] = ids[i];
  return out;
}

py::str Tokenizer::Decode(const py::iterable& ids_in, bool skip_special) const {
  const TokenizerHandle& t = Require(handle_, "the tokenizer");
  std::vector<int32_t> ids;
  for (const py::handle& h : ids_in) {
    if (!py::isinstance<py::int_>(h)) throw py::type_error("token ids must be ints");
    long long v = h.cast<long long>();
    if (v < INT32_MIN || v > INT32_MAX)
      Fail(UAII_ERR_INVALID_ARGUMENT, "token id " + std::to_string(v) + " is outside the vocabulary (" +
                                          std::to_string(uaii_tokenizer_vocab_size(t.h)) + ")");
    ids.push_back(static_cast<int32_t>(v));
  }
  uint32_t flags = skip_special ? uint32_t{UAII_DETOKENIZE_SKIP_SPECIAL} : 0u;
  std::string buf(ids.size() * 8 + 16, '\0');
  size_t n = 0;
  uaii_status st;
  std::string error;
  {
    py::gil_scoped_release nogil;
    st = uaii_detokenize(t.h, ids.data(), ids.size(), flags, buf.data(), buf.size(), &n);
    if (st == UAII_ERR_BUFFER_TOO_SMALL) {
      buf.resize(n + 1);
      st = uaii_detokenize(t.h, ids.data(), ids.size(), flags, buf.data(), buf.size(), &n);
    }
    if (st != UAII_OK) error = uaii_last_error();
  }
  if (st != UAII_OK) Fail(st, error);
  buf.resize(n);
  return DecodeUtf8(buf);
}

size_t Tokenizer::VocabSize() const { return uaii_tokenizer_vocab_size(Require(handle_, "the tokenizer").h); }

void BindTokenizer(py::module_& m) {
  py::class_<Tokenizer, std::shared_ptr<Tokenizer>>(m, "Tokenizer", R"doc(
A tokenizer: text to token ids and back.

``uaii.Tokenizer(path)`` opens one alone (a GGUF file, or a directory holding
tokenizer files); ``model.tokenizer`` is a model's own. Safe to share between threads.
Use it as a context manager or call close() to free it early.
)doc")
      .def(py::init(&Tokenizer::Open), py::arg("path"),
           "Opens the tokenizer of a GGUF file or of a directory holding tokenizer files.")
      .def("encode", &Tokenizer::Encode, py::arg("text"), py::arg("add_special") = true,
           py::arg("parse_special") = false, R"doc(
Text to token ids.

add_special: add BOS/EOS as the tokenizer's configuration says.
parse_special: recognise control tokens written in the text (e.g. ``<start_of_turn>``);
when False they are tokenized as plain text.
)doc")
      .def("decode", &Tokenizer::Decode, py::arg("ids"), py::arg("skip_special") = false, R"doc(
Token ids to text. Ids outside the vocabulary raise InvalidArgumentError; bytes that do
not form valid UTF-8 (ids that cut a character) become U+FFFD.
skip_special: leave control tokens out of the text.
)doc")
      .def_property_readonly("vocab_size", &Tokenizer::VocabSize, "Number of tokens in the vocabulary.")
      .def_property_readonly("closed", &Tokenizer::closed, "True after close().")
      .def("close", &Tokenizer::Close, "Frees the tokenizer (idempotent); later calls raise InvalidStateError.")
      .def("__enter__", [](std::shared_ptr<Tokenizer> self) { return self; })
      .def("__exit__", [](Tokenizer& self, py::args) { self.Close(); });
}

}  // namespace uaii_py
