#include "loaders/hf_tokenizer_info.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "loaders/hf_json.h"
#include "simdjson.h"
#include "util/str_cat.h"

namespace uaii::hf {
namespace {

namespace fs = std::filesystem;
using simdjson::dom::element;
using simdjson::dom::element_type;

// Files a tokenizer or a chat template may come from, in the order `inspect` lists them.
constexpr std::string_view kTokenizerFiles[] = {
    "tokenizer.json", "tokenizer.model", "tokenizer_config.json", "special_tokens_map.json", "vocab.json",
    "merges.txt", "added_tokens.json", "generation_config.json", "chat_template.jinja", "chat_template.json",
};

// Pieces that end a chat turn even when the configs name only one EOS (the same list
// gguf_summary.cpp uses, after llama.cpp's llama-vocab.cpp).
constexpr std::array<std::string_view, 12> kKnownTerminators = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<end_of_turn>",
    "<|endoftext|>", "<|eom_id|>", "<EOT>", "_<EOT>", "<|end_of_text|>", "<end_of_utterance>"};

absl::StatusOr<std::string> ReadText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return absl::NotFoundError(StrCat(p.string(), ": cannot open"));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A parsed JSON file; the parser owns the document.
struct JsonDoc {
  simdjson::dom::parser parser;
  element root;
};

absl::Status ParseFile(const fs::path& p, JsonDoc& doc, std::string& text) {
  auto t = ReadText(p);
  if (!t.ok()) return t.status();
  text = WidenBigIntegers(*t);
  if (auto err = doc.parser.parse(text).get(doc.root))
    return absl::InvalidArgumentError(StrCat(p.string(), ": invalid JSON: ", simdjson::error_message(err)));
  return absl::OkStatus();
}

// "bos_token": "<s>" or {"content": "<s>", ...}.
std::string TokenContent(element e) {
  std::string_view s;
  if (!e.get_string().get(s)) return std::string(s);
  element c;
  if (!e.at_key("content").get(c) && !c.get_string().get(s)) return std::string(s);
  return {};
}

std::vector<int64_t> IdList(element e) {
  std::vector<int64_t> out;
  int64_t v;
  simdjson::dom::array arr;
  if (!e.get_int64().get(v)) {
    out.push_back(v);
  } else if (!e.get_array().get(arr)) {
    for (element x : arr)
      if (!x.get_int64().get(v)) out.push_back(v);
  }
  return out;
}

// Token text <-> id, from tokenizer.json (added tokens and the model vocabulary).
struct Vocab {
  std::map<std::string, int64_t, std::less<>> by_text;
  std::map<int64_t, std::string> by_id;
  void Add(std::string_view text, int64_t id) {
    by_text.emplace(std::string(text), id);
    by_id.emplace(id, std::string(text));
  }
  int64_t Id(std::string_view t) const {
    auto it = by_text.find(t);
    return it == by_text.end() ? -1 : it->second;
  }
  std::string Text(int64_t id) const {
    auto it = by_id.find(id);
    return it == by_id.end() ? std::string() : it->second;
  }
};

absl::Status ReadTokenizerJson(const fs::path& p, HfTokenizerInfo& info, Vocab& vocab) {
  JsonDoc doc;
  std::string text;
  if (auto st = ParseFile(p, doc, text); !st.ok()) return st;
  int64_t max_id = -1;
  element model;
  if (!doc.root.at_key("model").get(model)) {
    std::string_view type;
    if (!model.at_key("type").get_string().get(type)) {
      info.model = std::string(type);
      std::transform(info.model.begin(), info.model.end(), info.model.begin(), [](unsigned char c) { return std::tolower(c); });
    }
    element v;
    if (!model.at_key("vocab").get(v)) {
      simdjson::dom::object obj;
      simdjson::dom::array arr;
      if (!v.get_object().get(obj)) {  // BPE / WordPiece / WordLevel: {"piece": id}
        for (auto f : obj) {
          int64_t id;
          if (f.value.get_int64().get(id)) continue;
          vocab.Add(std::string_view(f.key.data(), f.key.size()), id);
          max_id = std::max(max_id, id);
        }
      } else if (!v.get_array().get(arr)) {  // Unigram: [["piece", score], ...], id = index
        int64_t id = 0;
        for (element x : arr) {
          std::string_view piece;
          if (!x.at(0).get_string().get(piece)) vocab.Add(piece, id);
          max_id = std::max(max_id, id);
          ++id;
        }
      }
    }
  }
  element pre;
  std::string_view pre_type;
  if (!doc.root.at_key("pre_tokenizer").get(pre) && pre.type() == element_type::OBJECT &&
      !pre.at_key("type").get_string().get(pre_type))
    info.pre = std::string(pre_type);
  simdjson::dom::array added;
  if (!doc.root.at_key("added_tokens").get_array().get(added)) {
    for (element t : added) {
      int64_t id;
      std::string_view content;
      if (t.at_key("id").get_int64().get(id) || t.at_key("content").get_string().get(content)) continue;
      vocab.by_text.insert_or_assign(std::string(content), id);
      vocab.by_id.insert_or_assign(id, std::string(content));
      max_id = std::max(max_id, id);
    }
  }
  info.vocab_size = max_id + 1;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<HfTokenizerInfo> ReadTokenizerInfo(const std::string& dir_str, const HfConfig& cfg) {
  const fs::path dir(dir_str);
  HfTokenizerInfo info;
  for (auto f : kTokenizerFiles)
    if (fs::is_regular_file(dir / f)) info.files.emplace_back(f);
  auto has = [&](std::string_view f) { return std::find(info.files.begin(), info.files.end(), f) != info.files.end(); };

  Vocab vocab;
  if (has("tokenizer.json")) {
    if (auto st = ReadTokenizerJson(dir / "tokenizer.json", info, vocab); !st.ok()) return st;
  } else if (has("tokenizer.model")) {
    info.model = "sentencepiece";
  }

  // Special tokens: tokenizer_config.json names them by text.
  std::map<std::string, std::pair<std::string, std::string>> named;  // kind -> (content, source)
  if (has("tokenizer_config.json")) {
    JsonDoc doc;
    std::string text;
    if (auto st = ParseFile(dir / "tokenizer_config.json", doc, text); !st.ok()) return st;
    for (std::string_view kind : {"bos", "eos", "pad", "unk"}) {
      element e;
      if (doc.root.at_key(StrCat(kind, "_token")).get(e)) continue;
      std::string content = TokenContent(e);
      if (!content.empty()) named[std::string(kind)] = {content, "tokenizer_config.json"};
    }
    // Tokens that tokenizer.json may lack (slow tokenizers): added_tokens_decoder {"id": {content}}.
    simdjson::dom::object dec;
    if (!doc.root.at_key("added_tokens_decoder").get_object().get(dec)) {
      for (auto f : dec) {
        int64_t id = 0;
        std::string_view k(f.key.data(), f.key.size());
        if (std::from_chars(k.data(), k.data() + k.size(), id).ec != std::errc()) continue;
        std::string content = TokenContent(f.value);
        if (!content.empty() && vocab.Id(content) < 0) vocab.Add(content, id);
      }
    }
    bool b;
    if (!doc.root.at_key("add_bos_token").get_bool().get(b)) info.add_bos_token = b, info.add_bos_token_given = true;
    element tpl;
    if (!doc.root.at_key("chat_template").get(tpl)) {
      std::string_view s;
      simdjson::dom::array arr;
      if (!tpl.get_string().get(s)) {
        info.chat_template = std::string(s);
        info.chat_template_source = "tokenizer_config.json";
      } else if (!tpl.get_array().get(arr)) {  // [{"name": "default", "template": "..."}, ...]
        for (element t : arr) {
          std::string_view name, body;
          if (t.at_key("name").get_string().get(name) || t.at_key("template").get_string().get(body)) continue;
          if (name == "default") {
            info.chat_template = std::string(body);
            info.chat_template_source = "tokenizer_config.json";
          } else {
            info.named_chat_templates.emplace_back(name);
          }
        }
      }
    }
  }
  // transformers loads a separate template file in preference to tokenizer_config.json's.
  if (has("chat_template.jinja")) {
    auto t = ReadText(dir / "chat_template.jinja");
    if (!t.ok()) return t.status();
    info.chat_template = *std::move(t);
    info.chat_template_source = "chat_template.jinja";
  } else if (has("chat_template.json")) {
    JsonDoc doc;
    std::string text;
    if (auto st = ParseFile(dir / "chat_template.json", doc, text); !st.ok()) return st;
    std::string_view s;
    if (!doc.root.at_key("chat_template").get_string().get(s)) {
      info.chat_template = std::string(s);
      info.chat_template_source = "chat_template.json";
    }
  }

  auto add_special = [&](std::vector<HfSpecialToken>& out, std::string kind, int64_t id, std::string content,
                         std::string source) {
    if (id < 0 && !content.empty()) id = vocab.Id(content);
    if (content.empty() && id >= 0) content = vocab.Text(id);
    for (const auto& t : out)
      if ((id >= 0 && t.id == id) || (id < 0 && t.content == content)) return;
    out.push_back({std::move(kind), id, std::move(content), std::move(source)});
  };
  for (std::string kind : {"bos", "eos", "pad", "unk"}) {
    if (auto it = named.find(kind); it != named.end()) {
      add_special(info.special, kind, -1, it->second.first, it->second.second);
    } else {
      int64_t id = kind == "bos" ? cfg.bos_token_id : kind == "pad" ? cfg.pad_token_id
                   : kind == "eos" && !cfg.eos_token_ids.empty() ? cfg.eos_token_ids[0] : -1;
      if (id >= 0) add_special(info.special, kind, id, "", "config.json");
    }
  }

  // End of generation: every EOS the configs name, then known terminators in the vocabulary.
  for (int64_t id : cfg.eos_token_ids) add_special(info.end_of_generation, "eos", id, "", "config.json");
  if (has("generation_config.json")) {
    JsonDoc doc;
    std::string text;
    if (auto st = ParseFile(dir / "generation_config.json", doc, text); !st.ok()) return st;
    element e;
    if (!doc.root.at_key("eos_token_id").get(e))
      for (int64_t id : IdList(e)) add_special(info.end_of_generation, "eos", id, "", "generation_config.json");
  }
  if (auto it = named.find("eos"); it != named.end())
    add_special(info.end_of_generation, "eos", -1, it->second.first, it->second.second);
  for (auto piece : kKnownTerminators)
    if (int64_t id = vocab.Id(piece); id >= 0)
      add_special(info.end_of_generation, "eot", id, std::string(piece), "tokenizer.json");
  return info;
}

}  // namespace uaii::hf
