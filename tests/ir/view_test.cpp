// Weight views in the IR (ir::TensorView): binary and JSON round trips keep every
// field (synthetic values bit for bit), and the validator refuses a view whose
// arithmetic does not fit its tensor, naming the tensor.
#include <catch2/catch.hpp>

#include <cstring>
#include <functional>

#include "ir/serialize.h"
#include "ir/validate.h"
#include "test_graph.h"

using namespace uaii::ir;
using uaii::TensorType;
using uaii::ir::testing::ViewGraph;

namespace {

void CheckSameWeights(const Graph& a, const Graph& b) {
  REQUIRE(a.tensors.size() == b.tensors.size());
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    INFO(a.tensors[i].name);
    REQUIRE(a.tensors[i].weight.has_value() == b.tensors[i].weight.has_value());
    if (!a.tensors[i].weight) continue;
    CHECK(*a.tensors[i].weight == *b.tensors[i].weight);
    if (a.tensors[i].weight->view) {
      const auto& va = a.tensors[i].weight->view->values;
      const auto& vb = b.tensors[i].weight->view->values;
      REQUIRE(va.size() == vb.size());
      if (!va.empty())  // memcmp of empty vectors' null data is undefined
        CHECK(std::memcmp(va.data(), vb.data(), va.size() * sizeof(float)) == 0);  // bit for bit (-0.0 too)
    }
  }
}

std::string Message(const absl::Status& st) { return std::string(st.message()); }

}  // namespace

TEST_CASE("ir views: the view graph validates") {
  auto order = Validate(ViewGraph());
  INFO((order.ok() ? "" : Message(order.status())));
  CHECK(order.ok());
}

TEST_CASE("ir views: binary round trip keeps every view field") {
  Graph g = ViewGraph();
  auto bin = ToBinary(g);
  REQUIRE(bin.ok());
  auto back = FromBinary(*bin);
  REQUIRE(back.ok());
  CheckSameWeights(g, *back);
  // A GGUF reference stays view-less.
  CHECK_FALSE(back->FindTensor("attn_q.weight")->weight->view.has_value());
}

TEST_CASE("ir views: JSON round trip is exact and readable") {
  Graph g = ViewGraph();
  auto json = ToJson(g);
  REQUIRE(json.ok());
  CHECK(json->find("\"source_dtype\": \"BF16\"") != std::string::npos);
  CHECK(json->find("\"transpose\": true") != std::string::npos);
  CHECK(json->find("\"add_one\": true") != std::string::npos);
  CHECK(json->find("\"row_begin\": 3") != std::string::npos);
  CHECK(json->find("\"values\": [1e-20, 0.1, 3.4028235e+38, -0, 0.33333334]") != std::string::npos);
  auto back = FromJson(*json);
  INFO((back.ok() ? "" : Message(back.status())));
  REQUIRE(back.ok());
  CheckSameWeights(g, *back);
  auto json2 = ToJson(*back);
  REQUIRE(json2.ok());
  CHECK(*json2 == *json);
  // JSON -> binary -> JSON and binary -> JSON -> binary are lossless.
  auto bin = ToBinary(*back);
  REQUIRE(bin.ok());
  auto again = FromBinary(*bin);
  REQUIRE(again.ok());
  CHECK(*ToBinary(*again) == *bin);
}

TEST_CASE("ir views: a view that does not fit its tensor is a bad tensor naming it") {
  struct Case {
    const char* tensor;
    std::function<void(Tensor&)> edit;
    const char* says;
  };
  const Case cases[] = {
      {"token_embd.weight", [](Tensor& t) { t.weight->bytes -= 2; }, "declares 510 bytes"},
      {"sliced.weight", [](Tensor& t) { t.weight->view->row_begin = 5; }, "row slice [5, +2)"},
      {"sliced.weight", [](Tensor& t) { t.weight->view->row_begin = -1; }, "row slice"},
      {"attn_norm.weight", [](Tensor& t) { t.weight->view->transpose = true; }, "only matrices transpose"},
      {"reshaped.weight", [](Tensor& t) { t.weight->view->widen_f32 = false; }, "read only widened"},
      {"attn_norm.weight",
       [](Tensor& t) {
         t.weight->view->widen_f32 = false;
         t.dtype = TensorType::BF16;
       },
       "add_one needs an f32 result"},
      {"token_embd.weight", [](Tensor& t) { t.weight->view->widen_f32 = true; }, "yields F32, the tensor is F16"},
      {"token_embd.weight", [](Tensor& t) { t.shape = {16, 8}; }, "yields 256 elements, the tensor [16,8] has 128"},
      {"rope_freqs.weight", [](Tensor& t) { t.weight->view->values.pop_back(); }, "yields 4 elements"},
      {"rope_freqs.weight", [](Tensor& t) { t.weight->view->widen_f32 = true; }, "a synthetic view has only values"},
      {"blk.0.ffn_gate_exps.weight",
       [](Tensor& t) {
         auto& p = t.weight->view->parts[1];
         p.view->source_dtype = "F16";
       },
       "concat parts disagree: part 1"},
      {"blk.0.ffn_gate_exps.weight",
       [](Tensor& t) {
         auto& p = t.weight->view->parts;
         p[0].view->source_shape = {3, 8};  // 24 + 40 = 64 elements, but not whole [4, 8] slices
         p[0].bytes = 48;
         p[1].view->source_shape = {5, 8};
         p[1].bytes = 80;
       },
       "not whole leading slices"},
      {"blk.0.ffn_gate_exps.weight", [](Tensor& t) { t.weight->view->parts[0].view.reset(); }, "has no view"},
      {"blk.0.ffn_gate_exps.weight", [](Tensor& t) { t.weight->view->transpose = true; }, "a concat view has only parts"},
      {"sliced.weight", [](Tensor& t) { t.weight->view->source_dtype = "Q4_0"; }, "source dtype \"Q4_0\" is not readable"},
      {"sliced.weight", [](Tensor& t) { t.weight->view->source_shape = {6, 0}; }, "has dimension 0"},
      {"sliced.weight", [](Tensor& t) { t.weight->view = TensorView{}; }, "declares no source_dtype, parts or values"},
  };
  for (const Case& c : cases) {
    Graph g = ViewGraph();
    c.edit(*g.FindTensor(c.tensor));
    auto st = Validate(g).status();
    INFO(c.tensor << " -> " << Message(st));
    CHECK(absl::IsInvalidArgument(st));
    CHECK_THAT(Message(st), Catch::StartsWith(std::string("bad tensor: '") + c.tensor + "' view: "));
    CHECK_THAT(Message(st), Catch::Contains(c.says));
  }
}
