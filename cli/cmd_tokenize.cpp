// `uaii tokenize encode TEXT [--model PATH | --hf DIR] [--special] [--json]`
// `uaii tokenize decode ID... [--model PATH | --hf DIR] [--json]`
// PATH: a GGUF file or a directory with tokenizer files; without --model the
// default model ($UAII_MODEL, then the cache) is used. --json output follows
// docs/json/tokenize.schema.json.
#include <cstdio>
#include <filesystem>
#include <string>

#include "args.h"
#include "commands.h"
#include "uaii/model_locator.h"
#include "uaii/tokenizer.h"

namespace uaii::cli {
namespace {

void JsonString(std::string_view s, std::string& out) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

// Valid UTF-8 for JSON output: invalid bytes (a token holding half a character)
// become U+FFFD.
std::string Printable(std::string_view bytes) {
  std::string out;
  for (size_t i = 0; i < bytes.size();) {
    const auto b = static_cast<unsigned char>(bytes[i]);
    size_t n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    bool ok = n > 0 && i + n <= bytes.size();
    for (size_t k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(bytes[i + k]) & 0xC0) == 0x80;
    if (!ok) {
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    out.append(bytes.substr(i, n));
    i += n;
  }
  return out;
}

constexpr char kUsage[] =
    "usage: uaii tokenize encode TEXT [--model PATH | --hf DIR] [--special] [--json]\n"
    "       uaii tokenize decode ID... [--model PATH | --hf DIR] [--json]\n"
    "  --hf DIR: a Hugging Face directory's tokenizer (tokenizer.json or tokenizer.model)\n";

int Usage() {
  std::fprintf(stderr, "%s", kUsage);
  return 2;
}

}  // namespace

const char* const kTokenizeUsage = kUsage;

int RunTokenize(int argc, char** argv) {
  FlagSpec spec;
  spec.valued = {"--model", "--hf"};
  spec.boolean = {"--special", "--json", "--no-bos"};
  auto args = ParseArgs(argc, argv, spec);
  if (!args.ok()) {
    std::fprintf(stderr, "uaii tokenize: %s\n", std::string(args.status().message()).c_str());
    return Usage();
  }
  if (args->positional.empty()) return Usage();
  const std::string mode = args->positional[0];
  if (mode != "encode" && mode != "decode") return Usage();
  if (args->has("--model") && args->has("--hf")) {
    std::fprintf(stderr, "uaii tokenize: give --model or --hf, not both\n");
    return Usage();
  }
  if (args->has("--hf")) {
    // The product guide's spelling for a Hugging Face directory: it must hold tokenizer files.
    const std::filesystem::path dir(args->get("--hf"));
    if (!std::filesystem::is_directory(dir) ||
        (!std::filesystem::exists(dir / "tokenizer.json") && !std::filesystem::exists(dir / "tokenizer.model"))) {
      std::fprintf(stderr, "uaii tokenize: --hf %s: not a directory holding tokenizer.json or tokenizer.model\n",
                   dir.c_str());
      return 1;
    }
  }
  auto path = ResolveModelPath(args->has("--hf") ? args->get("--hf") : args->get("--model"));
  if (!path.ok()) {
    std::fprintf(stderr, "uaii tokenize: %s\n", std::string(path.status().message()).c_str());
    return 1;
  }
  auto tok = Tokenizer::Load(*path);
  if (!tok.ok()) {
    std::fprintf(stderr, "uaii tokenize: %s\n", std::string(tok.status().message()).c_str());
    return 1;
  }
  const bool json = args->has("--json");
  std::vector<TokenId> ids;
  if (mode == "encode") {
    if (args->positional.size() != 2) return Usage();
    EncodeOptions opts;
    opts.parse_special = args->has("--special");
    opts.add_special = !args->has("--no-bos");
    auto r = (*tok)->Encode(args->positional[1], opts);
    if (!r.ok()) {
      std::fprintf(stderr, "uaii tokenize: %s\n", std::string(r.status().message()).c_str());
      return 1;
    }
    ids = std::move(*r);
  } else {
    for (size_t i = 1; i < args->positional.size(); ++i) {
      const std::string& s = args->positional[i];
      char* end = nullptr;
      const long v = std::strtol(s.c_str(), &end, 10);
      if (s.empty() || *end != '\0' || v < 0 || static_cast<size_t>(v) >= (*tok)->vocab_size()) {
        std::fprintf(stderr, "uaii tokenize: token id '%s' is not in the vocabulary (size %zu)\n",
                     s.c_str(), (*tok)->vocab_size());
        return 1;
      }
      ids.push_back(static_cast<TokenId>(v));
    }
  }
  const std::string text = (*tok)->Decode(ids);
  if (!json) {
    if (mode == "encode") {
      for (size_t i = 0; i < ids.size(); ++i) std::printf(i ? " %d" : "%d", ids[i]);
      std::printf("\n");
    } else {
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::printf("\n");
    }
    return 0;
  }
  std::string out = "{\"mode\":";
  JsonString(mode, out);
  out += ",\"model\":";
  JsonString(*path, out);
  out += ",\"tokenizer\":";
  JsonString((*tok)->model_name(), out);
  out += ",\"ids\":[";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(ids[i]);
  }
  out += "],\"tokens\":[";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) out += ",";
    out += "{\"id\":" + std::to_string(ids[i]) + ",\"piece\":";
    JsonString(Printable((*tok)->Piece(ids[i])), out);
    out += ",\"text\":";
    JsonString(Printable((*tok)->TokenBytes(ids[i])), out);
    out += "}";
  }
  out += "],\"text\":";
  JsonString(Printable(text), out);
  out += ",\"count\":" + std::to_string(ids.size()) + "}\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace uaii::cli
