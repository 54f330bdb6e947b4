#include <catch2/catch.hpp>

#include "ir/registry.h"
#include "ir/validate.h"
#include "test_graph.h"

using namespace uaii::ir;
using uaii::ir::testing::TinyGraph;

namespace {
std::string ErrorOf(const Graph& g) {
  auto r = Validate(g);
  return r.ok() ? std::string("ok") : std::string(r.status().message());
}
bool StartsWith(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }
}  // namespace

TEST_CASE("ir: valid graph validates and orders ops") {
  Graph g = TinyGraph();
  std::swap(g.ops[0], g.ops[2]);  // file order does not matter
  auto order = Validate(g);
  REQUIRE(order.ok());
  REQUIRE(order->size() == g.ops.size());
  // every op runs after its producers
  std::vector<size_t> pos(order->size());
  for (size_t i = 0; i < order->size(); ++i) pos[(*order)[i]] = i;
  CHECK(pos[2] < pos[1]);  // embed (now at index 2) before norm
  CHECK(pos[1] < pos[0]);  // norm before q (now at index 0)
}

TEST_CASE("ir: unknown op") {
  Graph g = TinyGraph();
  g.ops[1].type = "layer_norm_v9";
  auto e = ErrorOf(g);
  CHECK(StartsWith(e, "unknown op:"));
  CHECK(e.find("layer_norm_v9") != std::string::npos);
}

TEST_CASE("ir: dangling tensor") {
  Graph g = TinyGraph();
  g.ops[2].inputs[0] = "nowhere";
  CHECK(StartsWith(ErrorOf(g), "dangling tensor:"));
  Graph g2 = TinyGraph();
  g2.tensors.push_back({"orphan", uaii::TensorType::F32, {kDimTokens, 8}, {}});
  g2.ops[2].inputs[0] = "orphan";  // declared but never produced
  auto e = ErrorOf(g2);
  CHECK(StartsWith(e, "dangling tensor:"));
  CHECK(e.find("orphan") != std::string::npos);
  Graph g3 = TinyGraph();
  g3.outputs = {"missing"};
  CHECK(StartsWith(ErrorOf(g3), "dangling tensor:"));
}

TEST_CASE("ir: cycle") {
  Graph g = TinyGraph();
  g.ops[1].inputs[0] = "q";  // norm reads q, q reads h = norm's output
  CHECK(StartsWith(ErrorOf(g), "cycle:"));
}

TEST_CASE("ir: shape mismatch") {
  Graph g = TinyGraph();
  g.FindTensor("q")->shape = {kDimTokens, 9};
  CHECK(StartsWith(ErrorOf(g), "shape mismatch:"));
  Graph g2 = TinyGraph();
  g2.FindTensor("attn_q.weight")->shape = {8, 7};
  g2.FindTensor("q")->shape = {kDimTokens, 8};
  auto e = ErrorOf(g2);
  CHECK(StartsWith(e, "shape mismatch:"));
  CHECK(e.find("inner dims") != std::string::npos);
  Graph g3 = TinyGraph();
  g3.ops[3].attrs["shape"] = std::vector<int64_t>{kDimTokens, 3, 4};
  CHECK(StartsWith(ErrorOf(g3), "shape mismatch:"));
}

TEST_CASE("ir: bad attribute") {
  Graph g = TinyGraph();
  g.ops[1].attrs.erase("eps");
  CHECK(StartsWith(ErrorOf(g), "bad attribute:"));
  Graph g2 = TinyGraph();
  g2.ops[4].attrs["mode"] = std::string("sideways");
  CHECK(StartsWith(ErrorOf(g2), "bad attribute:"));
  Graph g3 = TinyGraph();
  g3.ops[1].attrs["eps"] = std::string("small");
  CHECK(StartsWith(ErrorOf(g3), "bad attribute:"));
  Graph g4 = TinyGraph();
  g4.ops[2].attrs["transpose"] = int64_t{1};
  CHECK(StartsWith(ErrorOf(g4), "bad attribute:"));
  Graph g5 = TinyGraph();
  g5.ops[4].attrs["n_dims"] = int64_t{3};
  CHECK(StartsWith(ErrorOf(g5), "bad attribute:"));
}

TEST_CASE("ir: arity and duplicates") {
  Graph g = TinyGraph();
  g.ops[2].inputs.push_back("h");
  CHECK(StartsWith(ErrorOf(g), "bad arity:"));
  Graph g2 = TinyGraph();
  g2.ops[2].outputs = {"h"};  // h already produced by norm
  CHECK(StartsWith(ErrorOf(g2), "duplicate tensor:"));
}

TEST_CASE("ir: every registered op has a shape rule") {
  for (const auto& s : AllOps()) {
    CHECK(s.infer);
    CHECK(FindOp(s.type) == &s);
  }
}
