// Small valid graphs used by the IR tests: one attention block over weights, and the
// same with its weights as views of every kind.
#pragma once
#include "ir/graph.h"

namespace uaii::ir::testing {

inline Graph TinyGraph() {
  Graph g;
  g.name = "tiny";
  auto T = kDimTokens;
  auto w = [](std::string n) { return TensorRef{"m.gguf", n, 0, 0}; };
  g.tensors = {
      {"tokens", TensorType::I32, {T}, {}},
      {"positions", TensorType::I32, {T}, {}},
      {"token_embd.weight", TensorType::F16, {32, 8}, w("token_embd.weight")},
      {"attn_norm.weight", TensorType::F32, {8}, w("attn_norm.weight")},
      {"attn_q.weight", TensorType::Q8_0, {8, 8}, w("attn_q.weight")},
      {"x", TensorType::F32, {T, 8}, {}},
      {"h", TensorType::F32, {T, 8}, {}},
      {"q", TensorType::F32, {T, 8}, {}},
      {"q3", TensorType::F32, {T, 2, 4}, {}},
      {"qr", TensorType::F32, {T, 2, 4}, {}},
      {"att", TensorType::F32, {T, 8}, {}},
      {"last", TensorType::F32, {kDimRows, 8}, {}},
      {"logits", TensorType::F32, {kDimRows, 32}, {}},
  };
  auto op = [](std::string name, std::string type, std::vector<std::string> in, std::vector<std::string> out,
               std::map<std::string, AttrValue> attrs = {}) {
    return Op{std::move(name), std::move(type), std::move(in), std::move(out), std::move(attrs)};
  };
  g.ops = {
      op("embed", "embed", {"token_embd.weight", "tokens"}, {"x"}),
      op("norm", "rms_norm", {"x", "attn_norm.weight"}, {"h"}, {{"eps", 1e-6}}),
      op("q", "matmul", {"h", "attn_q.weight"}, {"q"}),
      op("q3", "reshape", {"q"}, {"q3"}, {{"shape", std::vector<int64_t>{T, 2, 4}}}),
      op("rope", "rope", {"q3", "positions"}, {"qr"},
         {{"mode", std::string("neox")}, {"n_dims", int64_t{4}}, {"freq_base", 10000.0}}),
      op("attn", "attention", {"qr", "q3", "q3"}, {"att"}, {{"layer", int64_t{0}}, {"scale", 0.5}}),
      op("rows", "output_rows", {"att"}, {"last"}),
      op("head", "matmul", {"last", "token_embd.weight"}, {"logits"}),
  };
  g.inputs = {"tokens", "positions"};
  g.outputs = {"logits"};
  g.metadata = {{"arch", "test"}};
  return g;
}

// A stored view of safetensors tensor `tensor` (view_test.cpp, hostile_test.cpp).
inline TensorRef Stored(std::string tensor, std::string dtype, Shape shape, uint64_t bytes) {
  TensorRef r{"model.safetensors", std::move(tensor), 64, bytes};
  r.view.emplace().source_dtype = std::move(dtype);
  r.view->source_shape = std::move(shape);
  return r;
}

// TinyGraph with its F16 embedding and f32 norm as views, plus unused weights of
// every other view kind.
inline Graph ViewGraph() {
  Graph g = TinyGraph();
  TensorRef embd = Stored("wte", "F16", {8, 32}, 8 * 32 * 2);
  embd.view->transpose = true;  // stored [8, 32], read [32, 8]
  g.FindTensor("token_embd.weight")->weight = embd;
  TensorRef norm = Stored("model.norm.weight", "BF16", {8}, 16);
  norm.view->widen_f32 = true;
  norm.view->add_one = true;
  g.FindTensor("attn_norm.weight")->weight = norm;
  TensorRef freqs;
  freqs.view.emplace().values = {1e-20f, 0.1f, 3.4028235e38f, -0.0f, 1.0f / 3.0f};
  g.tensors.push_back({"rope_freqs.weight", uaii::TensorType::F32, {5}, freqs});
  TensorRef bank;
  bank.view.emplace().parts = {Stored("experts.0.w1", "BF16", {4, 8}, 64), Stored("experts.1.w1", "BF16", {4, 8}, 64)};
  g.tensors.push_back({"blk.0.ffn_gate_exps.weight", uaii::TensorType::BF16, {2, 4, 8}, bank});
  TensorRef slice = Stored("fused.weight", "F32", {6, 8}, 6 * 8 * 4);
  slice.view->row_begin = 3;
  slice.view->row_count = 2;
  g.tensors.push_back({"sliced.weight", uaii::TensorType::F32, {2, 8}, slice});
  TensorRef u8 = Stored("scale", "U8", {1, 8}, 8);
  u8.view->widen_f32 = true;
  g.tensors.push_back({"reshaped.weight", uaii::TensorType::F32, {8}, u8});  // [1, 8] read as [8]
  return g;
}

}  // namespace uaii::ir::testing
