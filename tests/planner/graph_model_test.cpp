// Graph files as models: a compiled graph (weights as relative file#tensor references,
// tokenizer named in metadata) generates the same tokens as its GGUF; the
// hand-authored example graph (examples/graphs/) runs and equals the builder's
// 1-layer graph bit for bit.
#include <catch2/catch.hpp>

#include <cstring>

#include "ir/serialize.h"
#include "test_util.h"
#include "uaii/session.h"

using namespace uaii;
using namespace uaii::planner::testing;
namespace fs = std::filesystem;

namespace {

std::vector<TokenId> Greedy(const std::string& path, const std::vector<int32_t>& prompt, int n) {
  auto m = Model::Load(path);
  INFO(path << ": " << m.status().ToString());
  REQUIRE(m.ok());
  SessionOptions so;
  so.max_context = 256;
  so.threads = 1;
  auto s = Session::Create(*m, so);
  REQUIRE(s.ok());
  GenerateOptions go;
  go.max_tokens = n;
  auto r = GenerateGreedy(**s, std::vector<TokenId>(prompt.begin(), prompt.end()), go, nullptr);
  REQUIRE(r.ok());
  return r->tokens;
}

}  // namespace

TEST_CASE("graph model: a compiled .uaii.json / .uaii generates the GGUF's tokens") {
  const std::string gguf_path = Tiny("tiny-llama-q4_k.gguf");
  ir::Graph g = BuiltGraph(gguf_path);
  const std::string dir = ScratchDir("compiled");
  // As `uaii compile` writes it: paths relative to the graph file's directory.
  const std::string rel = fs::relative(fs::absolute(gguf_path), dir).string();
  for (auto& t : g.tensors)
    if (t.weight) t.weight->file = rel;
  g.metadata.emplace_back("tokenizer.gguf", rel);
  g.metadata.emplace_back("context_length", "256");
  auto prompt = TinyPrompt();
  prompt.resize(12);
  auto want = Greedy(gguf_path, prompt, 16);
  for (std::string name : {"m.uaii.json", "m.uaii"}) {
    REQUIRE(ir::WriteGraphFile(g, dir + "/" + name).ok());
    CHECK(Greedy(dir + "/" + name, prompt, 16) == want);
  }
  auto m = Model::Load(dir + "/m.uaii");
  REQUIRE(m.ok());
  CHECK((*m)->info().n_ctx_train == 256);
  CHECK((*m)->info().n_vocab == 320);
  // Without a tokenizer source the error says which key is missing.
  g.metadata.erase(std::find_if(g.metadata.begin(), g.metadata.end(),
                                [](const auto& kv) { return kv.first == "tokenizer.gguf"; }));
  REQUIRE(ir::WriteGraphFile(g, dir + "/bad.uaii").ok());
  auto bad = Model::Load(dir + "/bad.uaii");
  REQUIRE(!bad.ok());
  CHECK(std::string(bad.status().message()).find("tokenizer.gguf") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("graph model: the hand-authored example graph runs and matches the 1-layer builder graph") {
  const std::string example = std::string(UAII_SOURCE_DIR) + "/examples/graphs/tiny-llama-1layer.uaii.json";
  const std::string gguf_path = Tiny("tiny-llama-f32.gguf");
  if (!fs::exists(gguf_path)) FAIL("missing " << gguf_path << " (run tests/fixtures/make_tiny_models.py)");
  // The example names its GGUF relative to itself: put both side by side.
  const std::string dir = ScratchDir("example");
  fs::copy_file(example, dir + "/tiny-llama-1layer.uaii.json");
  fs::create_symlink(fs::absolute(gguf_path), dir + "/tiny-llama-f32.gguf");
  auto prompt = TinyPrompt();
  prompt.resize(10);
  auto tokens = Greedy(dir + "/tiny-llama-1layer.uaii.json", prompt, 8);
  CHECK(tokens.size() > 0);

  auto hand = ir::ReadGraphFile(example);
  REQUIRE(hand.ok());
  for (auto& t : hand->tensors)
    if (t.weight) t.weight->file = gguf_path;
  auto f = gguf::File::Open(gguf_path);
  REQUIRE(f.ok());
  auto spec = models::SpecFromGguf(**f);
  REQUIRE(spec.ok());
  spec->n_layer = 1;  // and only layer 0's tensors, which is all a 1-layer graph reads
  std::erase_if(spec->tensors, [](const auto& t) { return t.first.rfind("blk.", 0) == 0 && t.first.rfind("blk.0.", 0) != 0; });
  auto built = models::BuildGraph(*spec);
  INFO(built.status().message());
  REQUIRE(built.ok());
  auto a = Forward(*hand, prompt, 4);
  auto b = Forward(*built, prompt, 4);
  REQUIRE(a.size() == b.size());
  CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
  fs::remove_all(dir);
}
