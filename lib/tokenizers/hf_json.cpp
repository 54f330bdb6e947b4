// tokenizer.json (Hugging Face `tokenizers`) -> Tokenizer::Impl. Parsed with simdjson.
// Supported: model BPE (merges as "a b" strings or [a, b] pairs, byte_fallback,
// ignore_merges, unk/fuse_unk); normalizers Replace (String or Regex) / Prepend /
// NFC / Sequence; pre-tokenizers ByteLevel / Metaspace / Split (any Regex or
// String, every behavior, invert) / Whitespace / Digits / Sequence; added_tokens;
// TemplateProcessing BOS/EOS; the decoder's Strip. Anything else fails naming the
// component. Regexes the hand-written splitters know (pretokenizer.h) take those
// fast paths; any other runs in Oniguruma as HF's does (onig_regex.h).
#include <simdjson.h>

#include "tokenizers/str_cat.h"
#include "tokenizers/tokenizer_impl.h"

namespace uaii::tok {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

std::string_view Str(element e, std::string_view key, std::string_view fallback = "") {
  std::string_view v;
  if (e[key].get(v) != simdjson::SUCCESS) return fallback;
  return v;
}
bool Bool(element e, std::string_view key, bool fallback) {
  bool v;
  if (e[key].get(v) != simdjson::SUCCESS) return fallback;
  return v;
}
bool IsNull(element e, std::string_view key) {
  element v;
  return e[key].get(v) != simdjson::SUCCESS || v.is_null();
}

// Ids beyond this are refused before the vocabulary is sized from them: the largest
// real vocabularies hold a few hundred thousand tokens, and one hostile id must not
// allocate gigabytes.
constexpr int64_t kMaxVocabId = 50'000'000;

absl::Status Err(const std::string& path, std::string_view what) {
  return absl::InvalidArgumentError(StrCat(path, ": ", what));
}

// A well-formed tokenizer.json using a component uaii does not implement.
absl::Status Unsupported(const std::string& path, std::string_view what) {
  return absl::UnimplementedError(StrCat(path, ": unsupported ", what));
}

absl::Status AddNormalizer(const std::string& path, element n, TokenizerInternals::Impl& impl) {
  const std::string_view type = Str(n, "type");
  if (type == "Sequence") {
    array list;
    if (n["normalizers"].get(list) != simdjson::SUCCESS) return Err(path, "Sequence normalizer without normalizers");
    for (element c : list)
      if (absl::Status st = AddNormalizer(path, c, impl); !st.ok()) return st;
    return absl::OkStatus();
  }
  if (type == "Replace") {
    std::string_view from, regex;
    const std::string to(Str(n, "content"));
    if (n["pattern"]["String"].get(from) == simdjson::SUCCESS && !from.empty()) {
      impl.normalizers.push_back({NormKind::kReplace, std::string(from), to});
      return absl::OkStatus();
    }
    absl::StatusOr<std::shared_ptr<const OnigRegex>> re;
    if (n["pattern"]["Regex"].get(regex) == simdjson::SUCCESS) re = OnigRegex::Compile(regex);
    else if (n["pattern"]["String"].get(from) == simdjson::SUCCESS) re = OnigRegex::Literal(from);
    else return Err(path, "Replace normalizer without a Regex or String pattern");
    if (!re.ok()) return Err(path, StrCat("Replace normalizer: ", std::string(re.status().message())));
    impl.normalizers.push_back({NormKind::kReplaceRegex, "", to, *std::move(re)});
    return absl::OkStatus();
  }
  if (type == "Prepend") {
    impl.normalizers.push_back({NormKind::kPrepend, "", std::string(Str(n, "prepend"))});
    return absl::OkStatus();
  }
  if (type == "NFC") {
    impl.normalizers.push_back({NormKind::kNfc, "", ""});
    return absl::OkStatus();
  }
  return Unsupported(path, StrCat("normalizer ", type));
}

absl::StatusOr<SplitBehavior> Behavior(const std::string& path, std::string_view b) {
  if (b == "Isolated") return SplitBehavior::kIsolated;
  if (b == "Removed") return SplitBehavior::kRemoved;
  if (b == "MergedWithPrevious") return SplitBehavior::kMergedWithPrevious;
  if (b == "MergedWithNext") return SplitBehavior::kMergedWithNext;
  if (b == "Contiguous") return SplitBehavior::kContiguous;
  return Unsupported(path, StrCat("Split behavior ", b));
}

// A Split run by the general engine.
absl::Status AddRegexSplit(const std::string& path, std::string_view regex, SplitBehavior behavior,
                           bool invert, TokenizerInternals::Impl& impl) {
  auto re = OnigRegex::Compile(regex);
  if (!re.ok()) return Err(path, StrCat("Split pre_tokenizer: ", std::string(re.status().message())));
  PreStep s{PreKind::kSplitRegex};
  s.regex = *std::move(re);
  s.behavior = behavior;
  s.invert = invert;
  impl.pre_steps.push_back(std::move(s));
  if (impl.pre_name.empty()) impl.pre_name = "split-regex";
  return absl::OkStatus();
}

absl::Status AddPreTokenizer(const std::string& path, element p, TokenizerInternals::Impl& impl) {
  const std::string_view type = Str(p, "type");
  if (type == "Sequence") {
    array list;
    if (p["pretokenizers"].get(list) != simdjson::SUCCESS) return Err(path, "Sequence pre_tokenizer without pretokenizers");
    for (element c : list)
      if (absl::Status st = AddPreTokenizer(path, c, impl); !st.ok()) return st;
    return absl::OkStatus();
  }
  if (type == "ByteLevel") {
    PreStep s{PreKind::kByteLevel};
    s.add_prefix_space = Bool(p, "add_prefix_space", false);
    if (Bool(p, "use_regex", true)) s.patterns = {Pattern::kGpt2};
    impl.pre_steps.push_back(std::move(s));
    return absl::OkStatus();
  }
  if (type == "Metaspace") {
    PreStep s{PreKind::kMetaspace};
    s.str = std::string(Str(p, "replacement", "\xE2\x96\x81"));
    const std::string_view scheme = Str(p, "prepend_scheme", "");
    s.prepend_scheme = scheme == "first" ? 1 : scheme == "never" ? 2 : 0;
    if (scheme.empty() && !Bool(p, "add_prefix_space", true)) s.prepend_scheme = 2;
    s.split = Bool(p, "split", true);
    impl.pre_steps.push_back(std::move(s));
    return absl::OkStatus();
  }
  if (type == "Digits") {
    PreStep s{PreKind::kSplit};
    s.patterns = {Bool(p, "individual_digits", false) ? Pattern::kDigit : Pattern::kDigitsRun};
    impl.pre_steps.push_back(std::move(s));
    return absl::OkStatus();
  }
  if (type == "Whitespace") {  // tokenizers: Invert(\w+|[^\w\s]+), Removed
    return AddRegexSplit(path, R"(\w+|[^\w\s]+)", SplitBehavior::kRemoved, /*invert=*/true, impl);
  }
  if (type == "Split") {
    auto behavior = Behavior(path, Str(p, "behavior", "Isolated"));
    if (!behavior.ok()) return behavior.status();
    const bool invert = Bool(p, "invert", false);
    std::string_view regex, literal;
    if (p["pattern"]["Regex"].get(regex) == simdjson::SUCCESS) {
      // Isolated keeps matches and gaps alike, so invert changes nothing and a
      // hand-written splitter of the same regex gives the same pieces.
      if (*behavior == SplitBehavior::kIsolated)
        if (auto pats = PatternsForRegex(regex); pats.ok()) {
          impl.pre_steps.push_back({PreKind::kSplit, *pats});
          if (impl.pre_name.empty()) impl.pre_name = "split-regex";
          return absl::OkStatus();
        }
      return AddRegexSplit(path, regex, *behavior, invert, impl);
    }
    if (p["pattern"]["String"].get(literal) == simdjson::SUCCESS) {
      if (literal.empty())  // matches the empty string everywhere: the engine's case
        return AddRegexSplit(path, EscapeRegexLiteral(literal), *behavior, invert, impl);
      PreStep s{PreKind::kSplitString};
      s.str = std::string(literal);
      s.behavior = *behavior;
      s.invert = invert;
      impl.pre_steps.push_back(std::move(s));
      return absl::OkStatus();
    }
    return Err(path, "Split pre_tokenizer without a Regex or String pattern");
  }
  return Unsupported(path, StrCat("pre_tokenizer ", type));
}

// TemplateProcessing "single": a SpecialToken before $A means BOS, after it EOS.
void ReadTemplate(element pp, TokenizerInternals::Impl& impl) {
  const std::string_view type = Str(pp, "type");
  if (type == "Sequence") {
    array list;
    if (pp["processors"].get(list) == simdjson::SUCCESS)
      for (element c : list) ReadTemplate(c, impl);
    return;
  }
  if (type != "TemplateProcessing") return;
  array single;
  if (pp["single"].get(single) != simdjson::SUCCESS) return;
  bool seen_seq = false;
  for (element item : single) {
    std::string_view id;
    if (item["SpecialToken"]["id"].get(id) == simdjson::SUCCESS) {
      const TokenId tid = impl.vocab.Find(id);
      if (!seen_seq) {
        impl.add_bos = true;
        impl.special.bos = tid;
      } else {
        impl.add_eos = true;
        impl.special.eos = tid;
      }
    } else {
      seen_seq = true;
    }
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<TokenizerInternals::Impl>> LoadTokenizerJson(const std::string& path,
                                                                     const std::string& config) {
  simdjson::dom::parser parser;
  element doc;
  if (auto err = parser.load(path).get(doc); err)
    return absl::InvalidArgumentError(
        StrCat(path, ": cannot read tokenizer.json: ", simdjson::error_message(err)));
  auto impl = std::make_unique<TokenizerInternals::Impl>();
  element model;
  if (doc["model"].get(model) != simdjson::SUCCESS) return Err(path, "no \"model\" object");
  const std::string_view mtype = Str(model, "type", "BPE");
  if (mtype == "Unigram")
    return absl::UnimplementedError(StrCat(
        path, ": Unigram tokenizer.json is not supported; load the model's tokenizer.model "
              "(SentencePiece) instead, e.g. --model DIR with tokenizer.model in it"));
  if (mtype != "BPE")
    return absl::UnimplementedError(StrCat(path, ": unsupported tokenizer model ", mtype));
  if (!Str(model, "continuing_subword_prefix").empty() || !Str(model, "end_of_word_suffix").empty())
    return Err(path, "BPE continuing_subword_prefix / end_of_word_suffix are not supported");
  if (!IsNull(model, "dropout")) {
    double d = 0;
    if (model["dropout"].get(d) == simdjson::SUCCESS && d > 0)
      return Err(path, "BPE dropout is not supported (tokenization would be random)");
  }
  impl->model_name = "tokenizer.json:BPE";

  // Vocabulary: model.vocab plus added_tokens (whose ids may lie beyond it).
  object vocab;
  if (model["vocab"].get(vocab) != simdjson::SUCCESS) return Err(path, "model.vocab missing");
  int64_t max_id = -1;
  for (auto kv : vocab) {
    int64_t id;
    if (kv.value.get(id) != simdjson::SUCCESS)
      return Err(path, StrCat("model.vocab entry \"", kv.key, "\" has no valid id (not an integer)"));
    if (id < 0 || id > kMaxVocabId)
      return Err(path, StrCat("model.vocab entry \"", kv.key, "\" has no valid id (", id, " is outside [0, ",
                              kMaxVocabId, "])"));
    max_id = std::max(max_id, id);
  }
  array added;
  const bool has_added = doc["added_tokens"].get(added) == simdjson::SUCCESS;
  if (has_added)
    for (element a : added) {
      int64_t id;
      if (a["id"].get(id) != simdjson::SUCCESS || id < 0 || id > kMaxVocabId)
        return Err(path, StrCat("added_tokens entry \"", Str(a, "content"), "\" without a valid id (an integer in [0, ",
                                kMaxVocabId, "])"));
      max_id = std::max(max_id, id);
    }
  // The vocabulary is a dense table indexed by id, so its size comes from the largest id:
  // one entry with a huge id in a tiny file would allocate gigabytes (fuzz_tokenizer_json,
  // an id of 33 333 218 in 4 KB). Real files are dense, with added tokens at most a few
  // gaps beyond; refuse an id space mostly empty.
  size_t entries = vocab.size();
  if (has_added) entries += added.size();
  if (static_cast<uint64_t>(max_id) + 1 > 2 * static_cast<uint64_t>(entries) + 65536)
    return Err(path, StrCat("token id ", max_id, " is far beyond the ", entries,
                            " tokens the file lists (ids must be close to dense)"));
  impl->vocab.Resize(static_cast<size_t>(max_id + 1));
  std::vector<bool> taken(static_cast<size_t>(max_id + 1));
  for (auto kv : vocab) {
    int64_t id = 0;
    if (kv.value.get(id)) continue;
    // Two pieces on one id would leave one of them unreachable (and every merge
    // naming it failing with a misleading message): refuse by name.
    if (taken[id])
      return Err(path, StrCat("model.vocab gives id ", id, " to both \"", impl->vocab.pieces[id], "\" and \"",
                              kv.key, "\""));
    taken[id] = true;
    impl->vocab.pieces[id] = std::string(kv.key);
  }
  if (has_added)
    for (element a : added) {
      AddedToken t;
      int64_t id = 0;
      if (a["id"].get(id)) continue;
      t.id = static_cast<TokenId>(id);
      t.content = std::string(Str(a, "content"));
      t.special = Bool(a, "special", false);
      t.lstrip = Bool(a, "lstrip", false);
      t.rstrip = Bool(a, "rstrip", false);
      t.normalized = Bool(a, "normalized", !t.special);
      impl->vocab.pieces[t.id] = t.content;
      impl->vocab.types[t.id] = t.special ? TokenType::kControl : TokenType::kUserDefined;
      impl->added.push_back(std::move(t));
    }
  impl->vocab.BuildIndex();

  // Merges, in either layout.
  array merges;
  std::vector<std::pair<std::string_view, std::string_view>> pairs;
  if (model["merges"].get(merges) == simdjson::SUCCESS) {
    pairs.reserve(merges.size());
    for (element m : merges) {
      std::string_view s;
      array ab;
      if (m.get(s) == simdjson::SUCCESS) {
        const size_t sp = s.find(' ', 1);
        if (sp == s.npos) return Err(path, StrCat("merge \"", s, "\" has no space"));
        pairs.emplace_back(s.substr(0, sp), s.substr(sp + 1));
      } else if (m.get(ab) == simdjson::SUCCESS && ab.size() == 2) {
        std::string_view a, b;
        if (ab.at(0).get(a) || ab.at(1).get(b)) return Err(path, "merge pair is not two strings");
        pairs.emplace_back(a, b);
      } else {
        return Err(path, "merge is neither \"a b\" nor [a, b]");
      }
    }
  }
  impl->bpe.byte_fallback = Bool(model, "byte_fallback", false);
  impl->bpe.ignore_merges = Bool(model, "ignore_merges", false);
  impl->bpe.fuse_unk = Bool(model, "fuse_unk", false);
  if (std::string_view unk = Str(model, "unk_token"); !unk.empty()) {
    impl->bpe.unk = impl->vocab.Find(unk);
    impl->special.unk = impl->bpe.unk;
  }
  if (impl->bpe.byte_fallback)
    for (int b = 0; b < 256; ++b)
      if (impl->vocab.byte_ids[b] != kNoToken &&
          impl->vocab.types[impl->vocab.byte_ids[b]] == TokenType::kNormal)
        impl->vocab.types[impl->vocab.byte_ids[b]] = TokenType::kByte;
  if (absl::Status st = impl->bpe.Init(&impl->vocab, pairs, /*strict=*/true); !st.ok())
    return Err(path, std::string(st.message()));

  element n;
  if (doc["normalizer"].get(n) == simdjson::SUCCESS && !n.is_null())
    if (absl::Status st = AddNormalizer(path, n, *impl); !st.ok()) return st;
  element p;
  if (doc["pre_tokenizer"].get(p) == simdjson::SUCCESS && !p.is_null())
    if (absl::Status st = AddPreTokenizer(path, p, *impl); !st.ok()) return st;
  element pp;
  if (doc["post_processor"].get(pp) == simdjson::SUCCESS && !pp.is_null()) ReadTemplate(pp, *impl);
  element dec;
  if (doc["decoder"].get(dec) == simdjson::SUCCESS && !dec.is_null()) {
    array list;
    if (Str(dec, "type") == "Sequence" && dec["decoders"].get(list) == simdjson::SUCCESS)
      for (element d : list) {
        int64_t start = 0;
        if (Str(d, "type") == "Strip" && d["start"].get(start) == simdjson::SUCCESS && start > 0)
          impl->strip_leading_space = true;
      }
  }
  if (impl->pre_name.empty()) impl->pre_name = impl->pre_steps.empty() ? "none" : "tokenizer.json";
  if (!config.empty())
    if (absl::Status st = ApplyTokenizerConfig(config, *impl); !st.ok()) return st;
  if (absl::Status st = impl->Finish(); !st.ok()) return st;
  return impl;
}

// tokenizer_config.json often holds model_max_length = 1e30 written as an integer,
// which simdjson rejects; such literals (outside strings) become 0 before parsing.
std::string TameBigIntegers(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  bool in_str = false;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_str) {
      out.push_back(c);
      if (c == '\\' && i + 1 < json.size()) out.push_back(json[++i]);
      else if (c == '"') in_str = false;
      continue;
    }
    if (c == '"') in_str = true;
    if (c >= '0' && c <= '9') {
      size_t j = i;
      while (j < json.size() && json[j] >= '0' && json[j] <= '9') ++j;
      if (j - i > 18) {
        out.push_back('0');
        i = j - 1;
        continue;
      }
    }
    out.push_back(c);
  }
  return out;
}

absl::Status ApplyTokenizerConfig(const std::string& path, TokenizerInternals::Impl& impl) {
  simdjson::dom::parser parser;
  element doc;
  simdjson::padded_string raw;
  if (auto err = simdjson::padded_string::load(path).get(raw); err)
    return absl::InvalidArgumentError(
        StrCat(path, ": cannot read tokenizer_config.json: ", simdjson::error_message(err)));
  const std::string tamed = TameBigIntegers(std::string_view(raw.data(), raw.size()));
  if (auto err = parser.parse(tamed).get(doc); err)
    return absl::InvalidArgumentError(
        StrCat(path, ": cannot read tokenizer_config.json: ", simdjson::error_message(err)));
  bool b;
  if (doc["add_bos_token"].get(b) == simdjson::SUCCESS) impl.add_bos = b;
  if (doc["add_eos_token"].get(b) == simdjson::SUCCESS) impl.add_eos = b;
  auto token = [&](std::string_view key, TokenId* id) {
    std::string_view s;
    element e;
    if (doc[key].get(e) != simdjson::SUCCESS || e.is_null()) return;
    if (e.get(s) != simdjson::SUCCESS && e["content"].get(s) != simdjson::SUCCESS) return;
    if (TokenId t = impl.vocab.Find(s); t != kNoToken) *id = t;
  };
  token("bos_token", &impl.special.bos);
  token("eos_token", &impl.special.eos);
  token("unk_token", &impl.special.unk);
  token("pad_token", &impl.special.pad);
  return absl::OkStatus();
}

}  // namespace uaii::tok
