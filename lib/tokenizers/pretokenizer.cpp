#include "tokenizers/pretokenizer.h"

#include <algorithm>

#include "tokenizers/str_cat.h"
#include "tokenizers/unicode.h"

namespace uaii::tok {
namespace {

constexpr size_t kNoMatch = static_cast<size_t>(-1);

// A view of code points [0, e) with their class flags; positions >= e read as none.
struct Text {
  const uint32_t* c;
  const uint16_t* f;
  size_t e;
  uint32_t cp(size_t i) const { return i < e ? c[i] : 0xFFFFFFFFu; }
  uint16_t fl(size_t i) const { return i < e ? f[i] : 0; }
  bool is(size_t i, uint16_t m) const { return (fl(i) & m) != 0; }
  bool nl(size_t i) const { return cp(i) == '\r' || cp(i) == '\n'; }
  // [^\s\p{L}\p{N}] (and \p{M} too when `no_mark`)
  bool other(size_t i, bool no_mark = false) const {
    return i < e && !is(i, kSpace | kLetter | kNumber | (no_mark ? kMark : 0));
  }
};

// (?i:'s|'t|'re|'ve|'m|'ll|'d) or its case-sensitive GPT-2 form.
size_t Contraction(const Text& t, size_t i, bool icase) {
  if (t.cp(i) != '\'') return 0;
  auto lo = [&](size_t k) {
    uint32_t x = t.cp(k);
    return (icase && x >= 'A' && x <= 'Z') ? x + 32 : x;
  };
  const uint32_t a = lo(i + 1);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  const uint32_t b = lo(i + 2);
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  return 0;
}

// Whitespace alternatives at the end of every pattern:
//   [\s*[\r\n]+ |] \s+(?!\S) | \s+
// \s*[\r\n]+ ends right after the last \r or \n of the whitespace run (greedy \s*
// backs off to it); \s+(?!\S) leaves the run's last space for the next word unless
// the run reaches the end.
size_t Whitespace(const Text& t, size_t i, bool newline_alt) {
  if (!t.is(i, kSpace)) return 0;
  size_t k = i, last_nl = kNoMatch;
  while (k < t.e && t.is(k, kSpace)) {
    if (t.nl(k)) last_nl = k;
    ++k;
  }
  if (newline_alt && last_nl != kNoMatch) return last_nl + 1 - i;
  if (k == t.e || k - i == 1) return k - i;
  return k - i - 1;
}

// ` ?X+` for a class predicate X.
template <typename Pred>
size_t OptSpaceRun(const Text& t, size_t i, Pred x) {
  size_t j = i;
  if (t.cp(j) == ' ' && x(j + 1)) ++j;
  if (!x(j)) return 0;
  while (j < t.e && x(j)) ++j;
  return j - i;
}

// `P?R+` where P is a one-char prefix class and R the run class.
template <typename P, typename R>
size_t PrefixedRun(const Text& t, size_t i, P prefix, R run) {
  size_t j;
  if (prefix(i) && run(i + 1)) j = i + 1;
  else if (run(i)) j = i;
  else return 0;
  while (j < t.e && run(j)) ++j;
  return j - i;
}

size_t MatchGpt2(const Text& t, size_t i) {
  if (size_t n = Contraction(t, i, false)) return n;
  if (size_t n = OptSpaceRun(t, i, [&](size_t k) { return t.is(k, kLetter); })) return n;
  if (size_t n = OptSpaceRun(t, i, [&](size_t k) { return t.is(k, kNumber); })) return n;
  if (size_t n = OptSpaceRun(t, i, [&](size_t k) { return t.other(k); })) return n;
  return Whitespace(t, i, false);
}

// ` ?[^\s\p{L}\p{N}]+[\r\n]*` (with `/` in the tail for gpt-4o).
size_t SymbolRun(const Text& t, size_t i, bool no_mark, bool slash) {
  size_t n = OptSpaceRun(t, i, [&](size_t k) { return t.other(k, no_mark); });
  if (n == 0) return 0;
  size_t j = i + n;
  while (t.nl(j) || (slash && t.cp(j) == '/')) ++j;
  return j - i;
}

// llama3 / qwen2 / qwen35 share one shape; `max_digits` is 3 or 1.
size_t MatchLlama3Like(const Text& t, size_t i, size_t max_digits, bool marks) {
  if (size_t n = Contraction(t, i, true)) return n;
  const uint16_t word = marks ? (kLetter | kMark) : kLetter;
  auto prefix = [&](size_t k) { return k < t.e && !t.nl(k) && !t.is(k, kLetter | kNumber); };
  if (size_t n = PrefixedRun(t, i, prefix, [&](size_t k) { return t.is(k, word); })) return n;
  if (t.is(i, kNumber)) {
    size_t j = i;
    while (j < t.e && j - i < max_digits && t.is(j, kNumber)) ++j;
    return j - i;
  }
  if (size_t n = SymbolRun(t, i, marks, false)) return n;
  return Whitespace(t, i, true);
}

size_t MatchGpt4o(const Text& t, size_t i) {
  auto upper = [&](size_t k) { return t.is(k, kLu | kLt | kLm | kLo | kMark); };
  auto lower = [&](size_t k) { return t.is(k, kLl | kLm | kLo | kMark); };
  // [U]*[W]+ : greedy U*, then W+; when no W follows, U* gives back up to its last
  // char that is also W (Lm, Lo, M), which W+ then takes.
  auto alt1 = [&](size_t s) -> size_t {
    size_t a = s;
    while (a < t.e && upper(a)) ++a;
    size_t b = a;
    while (b < t.e && lower(b)) ++b;
    if (b > a) return b;
    for (size_t q = a; q > s; --q)
      if (lower(q - 1)) return q;
    return kNoMatch;
  };
  // [U]+[W]*
  auto alt2 = [&](size_t s) -> size_t {
    size_t a = s;
    while (a < t.e && upper(a)) ++a;
    if (a == s) return kNoMatch;
    while (a < t.e && lower(a)) ++a;
    return a;
  };
  const bool prefix = i < t.e && !t.nl(i) && !t.is(i, kLetter | kNumber);
  size_t end = kNoMatch;
  if (prefix && i + 1 < t.e) end = alt1(i + 1);
  if (end == kNoMatch) end = alt1(i);
  if (end == kNoMatch && prefix && i + 1 < t.e) end = alt2(i + 1);
  if (end == kNoMatch) end = alt2(i);
  if (end != kNoMatch) return end - i + Contraction(t, end, true);
  if (t.is(i, kNumber)) {
    size_t j = i;
    while (j < t.e && j - i < 3 && t.is(j, kNumber)) ++j;
    return j - i;
  }
  if (size_t n = SymbolRun(t, i, false, true)) return n;
  return Whitespace(t, i, true);
}

bool AsciiPunct(uint32_t c) {
  return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) ||
         (c >= 0x7B && c <= 0x7E);
}
bool AsciiAlpha(uint32_t c) { return (c | 32) >= 'a' && (c | 32) <= 'z'; }

size_t MatchDeepseek3(const Text& t, size_t i) {
  if (AsciiPunct(t.cp(i)) && AsciiAlpha(t.cp(i + 1))) {
    size_t j = i + 1;
    while (j < t.e && AsciiAlpha(t.cp(j))) ++j;
    return j - i;
  }
  auto prefix = [&](size_t k) {
    return k < t.e && !t.nl(k) && !t.is(k, kLetter | kPunct | kSymbol);
  };
  if (size_t n = PrefixedRun(t, i, prefix, [&](size_t k) { return t.is(k, kLetter | kMark); }))
    return n;
  if (size_t n = OptSpaceRun(t, i, [&](size_t k) { return t.is(k, kPunct | kSymbol); })) {
    size_t j = i + n;
    while (t.nl(j)) ++j;
    return j - i;
  }
  return Whitespace(t, i, true);
}

bool DeepseekCjk(uint32_t c) {
  return (c >= 0x4E00 && c <= 0x9FA5) || (c >= 0x3040 && c <= 0x30FF);
}

template <typename Pred>
size_t Run(const Text& t, size_t i, Pred p, size_t max = kNoMatch) {
  size_t j = i;
  while (j < t.e && j - i < max && p(j)) ++j;
  return j - i;
}

size_t MatchAt(Pattern p, const Text& t, size_t i) {
  switch (p) {
    case Pattern::kGpt2: return MatchGpt2(t, i);
    case Pattern::kLlama3: return MatchLlama3Like(t, i, 3, false);
    case Pattern::kQwen2: return MatchLlama3Like(t, i, 1, false);
    case Pattern::kQwen35: return MatchLlama3Like(t, i, 1, true);
    case Pattern::kGpt4o: return MatchGpt4o(t, i);
    case Pattern::kDeepseek3: return MatchDeepseek3(t, i);
    case Pattern::kDeepseek3Cjk: return Run(t, i, [&](size_t k) { return DeepseekCjk(t.c[k]); });
    case Pattern::kDigit: return t.is(i, kNumber) ? 1 : 0;
    case Pattern::kDigits3: return Run(t, i, [&](size_t k) { return t.is(k, kNumber); }, 3);
    case Pattern::kDigitsRun: return Run(t, i, [&](size_t k) { return t.is(k, kNumber); });
    case Pattern::kPunctRun:
      return Run(t, i, [&](size_t k) {
        const uint32_t c = t.c[k];
        return t.is(k, kPunct) || c == '$' || c == '+' || c == '<' || c == '=' || c == '>' ||
               c == '^' || c == '~' || c == '|';
      });
    case Pattern::kAscii3Digits:
      return Run(t, i, [&](size_t k) { return t.c[k] >= '0' && t.c[k] <= '9'; }, 3) == 3 ? 3 : 0;
    case Pattern::kNewlines: {
      const bool nl = t.c[i] == '\n';
      return Run(t, i, [&](size_t k) { return (t.c[k] == '\n') == nl; });
    }
  }
  return 0;
}

// Splits [b, e) of the full text by one pattern, appending piece ends to `ends`.
// Matches and the unmatched gaps between them both become pieces.
void SplitRange(Pattern p, const uint32_t* cps, const uint16_t* fl, size_t b, size_t e,
                std::vector<uint32_t>& ends) {
  const Text t{cps + b, fl + b, e - b};
  size_t i = 0, gap = 0;
  while (i < t.e) {
    const size_t n = MatchAt(p, t, i);
    if (n == 0) {
      ++i;
      continue;
    }
    if (i > gap) ends.push_back(static_cast<uint32_t>(b + i));
    i += n;
    ends.push_back(static_cast<uint32_t>(b + i));
    gap = i;
  }
  if (i > gap) ends.push_back(static_cast<uint32_t>(b + i));
}

// Table of named pre-tokenizers: names as llama.cpp's tokenizer.ggml.pre spells them.
struct Family {
  std::vector<std::string_view> names;  // first is canonical
  NamedPreTokenizer spec;
};

const std::vector<Family>& Families() {
  using P = Pattern;
  static const auto* kFamilies = new std::vector<Family>{
      {{"default"}, {"default", {P::kPunctRun, P::kGpt2, P::kDigitsRun, P::kAscii3Digits}}},
      {{"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0",
        "mellum", "modern-bert", "mpt", "olmo", "jais", "trillion", "granite-docling",
        "jina-v1-en", "jina-v2-code", "roberta-bpe", "exaone4"},
       {"gpt-2", {P::kGpt2}}},
      {{"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
        "jina-v5-nano"},
       {"llama3", {P::kLlama3}, /*ignore_merges=*/true}},
      {{"smaug-bpe", "dbrx"}, {"smaug-bpe", {P::kLlama3}}},
      {{"qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "stablelm2", "hunyuan", "megrez",
        "solar-open"},
       {"qwen2", {P::kQwen2}}},
      {{"qwen35"}, {"qwen35", {P::kQwen35}}},
      {{"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b",
        "mellum2"},
       {"starcoder", {P::kDigit, P::kGpt2}}},
      {{"gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"}, {"gpt-4o", {P::kGpt4o}}},
      {{"deepseek-v3", "hunyuan-dense", "joyai-llm", "hy_v4"},
       {"deepseek-v3", {P::kDigits3, P::kDeepseek3Cjk, P::kDeepseek3}}},
      {{"gemma4"}, {"gemma4", {P::kNewlines}, false, /*byte_level=*/false}},
  };
  return *kFamilies;
}

}  // namespace

absl::StatusOr<const NamedPreTokenizer*> FindNamedPreTokenizer(std::string_view name) {
  for (const auto& f : Families())
    if (std::find(f.names.begin(), f.names.end(), name) != f.names.end()) return &f.spec;
  return absl::UnimplementedError(StrCat(
      "unsupported pre-tokenizer ", name,
      " (tokenizer.ggml.pre); supported: default, gpt-2, llama3, smaug-bpe, qwen2, qwen35, "
      "starcoder, gpt-4o, deepseek-v3, gemma4 and their aliases"));
}

std::vector<std::string_view> NamedPreTokenizerNames() {
  std::vector<std::string_view> out;
  for (const auto& f : Families()) out.push_back(f.spec.name);
  return out;
}

std::vector<uint32_t> SplitCodepoints(std::span<const Pattern> patterns, const uint32_t* cps,
                                      size_t n) {
  if (n == 0) return {};
  std::vector<uint16_t> fl(n);
  for (size_t i = 0; i < n; ++i) fl[i] = CpFlags(cps[i]);
  std::vector<uint32_t> bounds = {0, static_cast<uint32_t>(n)};
  for (Pattern p : patterns) {
    std::vector<uint32_t> next = {0};
    next.reserve(bounds.size() * 2);
    for (size_t k = 0; k + 1 < bounds.size(); ++k)
      SplitRange(p, cps, fl.data(), bounds[k], bounds[k + 1], next);
    bounds.swap(next);
  }
  return bounds;
}

std::span<const FastPathRegex> FastPathRegexes() {
  using P = Pattern;
  static const FastPathRegex kKnown[] = {
      {R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)", P::kGpt2},
      {R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))", P::kGpt2},
      {R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
       P::kLlama3},
      {R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
       P::kQwen2},
      {R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
       P::kQwen35},
      {R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
       P::kGpt4o},
      {R"([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
       P::kDeepseek3},
      {"[一-龥぀-ゟ゠-ヿ]+", P::kDeepseek3Cjk},
      {R"(\p{N}{1,3})", P::kDigits3},
      {R"(\p{N})", P::kDigit},
      {R"(\p{N}+)", P::kDigitsRun},
      {R"([^\n]+|[\n]+)", P::kNewlines},
      {R"([\p{P}\$\+<=>\^~\|]+)", P::kPunctRun},
      {R"([0-9][0-9][0-9])", P::kAscii3Digits},
  };
  return kKnown;
}

absl::StatusOr<std::vector<Pattern>> PatternsForRegex(std::string_view regex) {
  for (const FastPathRegex& k : FastPathRegexes())
    if (k.regex == regex) return std::vector<Pattern>{k.pattern};
  return absl::NotFoundError(StrCat("no hand-written splitter for the regex \"", regex, "\""));
}

}  // namespace uaii::tok
