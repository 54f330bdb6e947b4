// The cost of grammar-constrained sampling on a real generation: decodes with a
// TokenSampler under a grammar (GBNF or a JSON Schema) and times, at every step, the
// constrained sample against an unconstrained sample of the same logits row and against
// the decode. Prints one JSON line:
//   tokens, decode_s (the forward passes), sample_plain_s, sample_grammar_s (all steps),
//   overhead (sample_grammar_s - sample_plain_s) / (decode_s + sample_plain_s): the
//   decode slowdown the grammar costs, fast_path_steps (the unconstrained choice was
//   allowed: one grammar check), vocab_build_s (the vocabulary trie, once per sampler),
//   and the text.
//   uaii_bench_grammar MODEL (--grammar FILE | --json-schema FILE) [--prompt TEXT] [--gen M] [--threads T]
// The prompt is one user turn in Gemma's turn format (the default model's); greedy.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "uaii/grammar.h"
#include "uaii/json_writer.h"
#include "uaii/session.h"
#include "uaii/token_sampler.h"

namespace {

int Fail(const absl::Status& st) {
  std::fprintf(stderr, "%s\n", std::string(st.message()).c_str());
  return 1;
}

std::string Slurp(const char* path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: uaii_bench_grammar MODEL (--grammar FILE | --json-schema FILE) [--prompt TEXT]"
                         " [--gen M] [--threads T]\n");
    return 2;
  }
  std::string gbnf, user = "Invent a person and describe them as JSON.";
  int64_t n_gen = 128;
  int threads = 2;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--grammar")) gbnf = Slurp(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--json-schema")) {
      auto g = uaii::JsonSchemaToGrammar(Slurp(argv[i + 1]));
      if (!g.ok()) return Fail(g.status());
      gbnf = *g;
    } else if (!std::strcmp(argv[i], "--prompt")) user = argv[i + 1];
    else if (!std::strcmp(argv[i], "--gen")) n_gen = std::atoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--threads")) threads = std::atoi(argv[i + 1]);
  }
  auto model = uaii::Model::Load(argv[1]);
  if (!model.ok()) return Fail(model.status());
  const uaii::Tokenizer& tok = (*model)->tokenizer();
  auto prompt = tok.Encode("<start_of_turn>user\n" + user + "<end_of_turn>\n<start_of_turn>model\n",
                           {.parse_special = true, .add_special = true});
  if (!prompt.ok()) return Fail(prompt.status());
  uaii::SessionOptions so;
  so.threads = threads;
  so.max_context = static_cast<int64_t>(prompt->size()) + n_gen + 1;
  auto session = uaii::Session::Create(*model, so);
  if (!session.ok()) return Fail(session.status());

  using Clock = std::chrono::steady_clock;
  auto secs = [](Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); };
  const auto v0 = Clock::now();
  auto constrained = uaii::TokenSampler::Create(uaii::sampling::SamplingParams::Greedy(), tok, gbnf);
  const double vocab_build = secs(v0, Clock::now());
  if (!constrained.ok()) return Fail(constrained.status());
  auto plain = uaii::TokenSampler::Create(uaii::sampling::SamplingParams::Greedy());
  std::vector<float> logits;
  if (absl::Status st = (*session)->EvalInto(*prompt, &logits); !st.ok()) return Fail(st);
  double decode = 0, sample_plain = 0, sample_grammar = 0;
  int64_t n = 0, fast = 0;
  std::string text;
  for (; n < n_gen; ++n) {
    const auto a = Clock::now();
    auto free_choice = (*plain)->Sample(logits);
    const auto b = Clock::now();
    auto t = (*constrained)->SampleAndAccept(logits);
    const auto c = Clock::now();
    if (!free_choice.ok()) return Fail(free_choice.status());
    if (!t.ok()) return Fail(t.status());
    sample_plain += secs(a, b);
    sample_grammar += secs(b, c);
    fast += *free_choice == *t;
    if (tok.IsEndOfGeneration(*t)) break;
    text += tok.TokenBytes(*t);
    const auto d0 = Clock::now();
    if (absl::Status st = (*session)->DecodeInto(*t, &logits); !st.ok()) return Fail(st);
    decode += secs(d0, Clock::now());
  }
  uaii::JsonWriter w;
  w.BeginObject();
  w.Key("tokens").Int(n).Key("decode_s").Double(decode).Key("sample_plain_s").Double(sample_plain);
  w.Key("sample_grammar_s").Double(sample_grammar);
  w.Key("overhead").Double((sample_grammar - sample_plain) / (decode + sample_plain));
  w.Key("fast_path_steps").Int(fast).Key("vocab_build_s").Double(vocab_build).Key("text").String(text);
  w.EndObject();
  std::printf("%s\n", w.str().c_str());
  return 0;
}
