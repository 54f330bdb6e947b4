// A small valid graph used by the IR tests: one attention block over weights.
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

}  // namespace uaii::ir::testing
