#include <catch2/catch.hpp>

#include "ir/serialize.h"
#include "ir/validate.h"
#include "test_graph.h"

using namespace uaii::ir;
using uaii::ir::testing::TinyGraph;

namespace {
void CheckSame(const Graph& a, const Graph& b) {
  REQUIRE(a.tensors.size() == b.tensors.size());
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    CHECK(a.tensors[i].name == b.tensors[i].name);
    CHECK(a.tensors[i].dtype == b.tensors[i].dtype);
    CHECK(a.tensors[i].shape == b.tensors[i].shape);
    REQUIRE(a.tensors[i].weight.has_value() == b.tensors[i].weight.has_value());
    if (a.tensors[i].weight) CHECK(*a.tensors[i].weight == *b.tensors[i].weight);
  }
  REQUIRE(a.ops.size() == b.ops.size());
  for (size_t i = 0; i < a.ops.size(); ++i) {
    CHECK(a.ops[i].name == b.ops[i].name);
    CHECK(a.ops[i].type == b.ops[i].type);
    CHECK(a.ops[i].inputs == b.ops[i].inputs);
    CHECK(a.ops[i].outputs == b.ops[i].outputs);
    REQUIRE(a.ops[i].attrs.size() == b.ops[i].attrs.size());
    for (const auto& [k, v] : a.ops[i].attrs) {
      REQUIRE(b.ops[i].attrs.count(k));
      const auto& w = b.ops[i].attrs.at(k);
      CHECK(v.index() == w.index());
      if (auto* f = std::get_if<double>(&v)) CHECK(float(*f) == float(std::get<double>(w)));
      else CHECK(v == w);
    }
  }
  CHECK(a.inputs == b.inputs);
  CHECK(a.outputs == b.outputs);
  CHECK(a.metadata == b.metadata);
}
}  // namespace

TEST_CASE("ir: binary round trip keeps the UAIR identifier") {
  Graph g = TinyGraph();
  auto bin = ToBinary(g);
  REQUIRE(bin.ok());
  CHECK(bin->substr(4, 4) == "UAIR");
  auto back = FromBinary(*bin);
  REQUIRE(back.ok());
  CheckSame(g, *back);
  CHECK(Validate(*back).ok());
}

TEST_CASE("ir: JSON round trip through FlatBuffers text") {
  Graph g = TinyGraph();
  g.ops[1].attrs["eps"] = double(9.999999974752427e-07f);  // a float32 value from GGUF
  g.ops[2].attrs["zero"] = int64_t{0};  // every field default: the kind must survive
  auto json = ToJson(g);
  REQUIRE(json.ok());
  CHECK(json->find("\"token_embd.weight\"") != std::string::npos);
  CHECK(json->find("Q8_0") != std::string::npos);  // dtypes print by name
  auto back = FromJson(*json);
  REQUIRE(back.ok());
  CheckSame(g, *back);
  auto json2 = ToJson(*back);
  REQUIRE(json2.ok());
  CHECK(*json2 == *json);
}

TEST_CASE("ir: corrupt inputs are errors, not crashes") {
  CHECK(!FromBinary("garbage").ok());
  auto bin = ToBinary(TinyGraph());
  REQUIRE(bin.ok());
  std::string cut = bin->substr(0, bin->size() / 2);
  CHECK(!FromBinary(cut).ok());
  auto e = FromJson("{ \"graph\": { \"tensors\": [ { \"nam\": 1 } ] } }");
  REQUIRE(!e.ok());
  CHECK(std::string(e.status().message()).find("uaii IR JSON") == 0);
}
