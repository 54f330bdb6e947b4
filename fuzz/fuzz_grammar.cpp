// Grammars as users and model files deliver them: GBNF text (--grammar, the C ABI's
// grammar), or a JSON Schema (--json-schema, response_format) through the converter.
// Whatever parses must be followable without a crash, a hang or unbounded memory, and
// the token mask must agree with the one-token check: a token survives Mask exactly
// when Allows says so, and Accept takes exactly the allowed ones (lib/sampling).
// Input: a mode byte (bit 0: the text is a JSON Schema), a 16-bit length, the text, then
// bytes that pick tokens of a small fixed vocabulary (ASCII, JSON pieces, multi-byte and
// split UTF-8 characters) to follow.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <fuzzer/FuzzedDataProvider.h>

#include "sampling/grammar_constraint.h"
#include "sampling/json_schema_grammar.h"

namespace {

std::shared_ptr<const uaii::sampling::GrammarVocabulary> Vocabulary() {
  static const auto vocab = [] {
    std::vector<std::string> pieces = {"", std::string(1, '\0'), "{\"", "\":", "\"}", "true", "false", "null",
                                       "\xc3\xa9", "\xe4\xb8\xad", "\xe4", "\xb8\xad", "\xf0\x9f\x98", "\x80",
                                       "\\u00", "  ", "\n", "-1", "0.5e3", "abc"};
    for (int c = 1; c < 128; ++c) pieces.push_back(std::string(1, static_cast<char>(c)));
    return std::make_shared<const uaii::sampling::GrammarVocabulary>(pieces, std::vector<int32_t>{0});
  }();
  return vocab;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace uaii::sampling;
  FuzzedDataProvider in(data, size);
  const bool schema = in.ConsumeIntegral<uint8_t>() & 1;
  std::string text = in.ConsumeBytesAsString(in.ConsumeIntegral<uint16_t>());
  if (schema) {
    auto gbnf = JsonSchemaToGbnf(text);
    if (!gbnf.ok()) return 0;
    text = *std::move(gbnf);
  }
  auto grammar = ParseGbnf(text);
  if (!grammar.ok()) {
    // The converter's output parses, except where llama.cpp's converter writes counts its
    // loader refuses too ({m,n} with n < m, m above 2000: JsonSchemaToGrammar says so).
    const std::string why(grammar.status().message());
    if (schema && why.find("repetition") == std::string::npos) __builtin_trap();
    return 0;
  }
  GrammarConstraint c(*grammar, Vocabulary());
  const size_t n = Vocabulary()->size();
  std::vector<float> logits(n);
  for (int step = 0; step < 64 && in.remaining_bytes() > 0; ++step) {
    std::fill(logits.begin(), logits.end(), 0.0f);
    c.Mask(logits);
    std::vector<int32_t> allowed;
    for (size_t id = 0; id < n; ++id) {
      const bool a = c.Allows(static_cast<int32_t>(id));
      if (a != !std::isinf(logits[id])) __builtin_trap();  // mask and check disagree
      if (a) allowed.push_back(static_cast<int32_t>(id));
    }
    if (!c.error().ok() || allowed.empty()) return 0;
    const int32_t pick = allowed[in.ConsumeIntegralInRange<size_t>(0, allowed.size() - 1)];
    if (!c.Accept(pick).ok()) __builtin_trap();
    if (pick == 0) return 0;  // end of generation
  }
  return 0;
}
