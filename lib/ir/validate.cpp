#include "ir/validate.h"

#include <deque>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ir/registry.h"
#include "ir/view.h"

namespace uaii::ir {
namespace {

std::string OpLabel(const Op& op, size_t i) {
  return absl::StrCat("op #", i, " '", op.name, "' (", op.type, ")");
}

bool KindMatches(const AttrValue& v, AttrKind k) {
  switch (k) {
    case AttrKind::kInt: return std::holds_alternative<int64_t>(v);
    // An integer literal is a fine float (JSON writers drop ".0").
    case AttrKind::kFloat: return std::holds_alternative<double>(v) || std::holds_alternative<int64_t>(v);
    case AttrKind::kString: return std::holds_alternative<std::string>(v);
    case AttrKind::kInts: return std::holds_alternative<std::vector<int64_t>>(v);
  }
  return false;
}

absl::Status CheckOpSignature(const Op& op, size_t i, const OpSchema& s) {
  int n_in = static_cast<int>(op.inputs.size());
  const int n_out = static_cast<int>(op.outputs.size());
  // num_outputs < 0: between 1 and -num_outputs outputs (the shape rule checks the count).
  const bool out_ok = s.num_outputs >= 0 ? n_out == s.num_outputs : n_out >= 1 && n_out <= -s.num_outputs;
  if (n_in < s.min_inputs || n_in > s.max_inputs || !out_ok)
    return absl::InvalidArgumentError(absl::StrCat(
        "bad arity: ", OpLabel(op, i), " has ", n_in, " inputs and ", op.outputs.size(),
        " outputs; expects ", s.min_inputs, "..", s.max_inputs, " inputs and ",
        s.num_outputs >= 0 ? absl::StrCat(s.num_outputs) : absl::StrCat("1..", -s.num_outputs), " outputs"));
  for (int k = 0; k < s.min_inputs; ++k)
    if (op.inputs[k].empty())
      return absl::InvalidArgumentError(
          absl::StrCat("bad arity: ", OpLabel(op, i), " input ", k, " is required"));
  for (const auto& a : s.attrs) {
    auto it = op.attrs.find(std::string(a.name));
    if (it == op.attrs.end()) {
      if (a.required)
        return absl::InvalidArgumentError(
            absl::StrCat("bad attribute: ", OpLabel(op, i), " lacks required attribute '", std::string(a.name), "'"));
      continue;
    }
    if (!KindMatches(it->second, a.kind))
      return absl::InvalidArgumentError(
          absl::StrCat("bad attribute: ", OpLabel(op, i), " attribute '", std::string(a.name), "' has the wrong type"));
  }
  for (const auto& [name, v] : op.attrs) {
    bool known = false;
    for (const auto& a : s.attrs) known |= a.name == name;
    if (!known)
      return absl::InvalidArgumentError(
          absl::StrCat("bad attribute: ", OpLabel(op, i), " has unknown attribute '", name, "'"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<size_t>> Validate(const Graph& g) {
  absl::flat_hash_map<std::string, const Tensor*> declared;
  for (const auto& t : g.tensors) {
    if (t.name.empty()) return absl::InvalidArgumentError("dangling tensor: a tensor has no name");
    if (!declared.emplace(t.name, &t).second)
      return absl::InvalidArgumentError(absl::StrCat("duplicate tensor: '", t.name, "' declared twice"));
    if (!FindTensorType(static_cast<uint32_t>(t.dtype)))
      return absl::InvalidArgumentError(absl::StrCat("bad tensor: '", t.name, "' has unknown dtype id ",
                                                     static_cast<uint32_t>(t.dtype)));
    for (int64_t d : t.shape)
      if (d == 0 || d < kDimRows || d > (int64_t{1} << 40))
        return absl::InvalidArgumentError(absl::StrCat("bad tensor: '", t.name, "' has dimension ", d, " in ",
                                                       ShapeString(t.shape), " (sizes are positive, or -1 = T, -2 = R)"));
    if (auto st = CheckWeightView(t); !st.ok()) return st;
  }
  // Sources: graph inputs and weights. Everything else must have exactly one producer.
  absl::flat_hash_map<std::string, size_t> producer;
  absl::flat_hash_set<std::string> sources;
  for (const auto& n : g.inputs) {
    if (!declared.count(n))
      return absl::InvalidArgumentError(absl::StrCat("dangling tensor: graph input '", n, "' is not declared"));
    sources.insert(n);
  }
  for (const auto& t : g.tensors)
    if (t.weight) sources.insert(t.name);

  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    const OpSchema* s = FindOp(op.type);
    if (!s)
      return absl::InvalidArgumentError(absl::StrCat("unknown op: ", OpLabel(op, i), " type '", op.type,
                                                     "' is not in the registry"));
    if (auto st = CheckOpSignature(op, i, *s); !st.ok()) return st;
    for (const auto& out : op.outputs) {
      if (!declared.count(out))
        return absl::InvalidArgumentError(
            absl::StrCat("dangling tensor: ", OpLabel(op, i), " output '", out, "' is not declared"));
      if (sources.count(out))
        return absl::InvalidArgumentError(absl::StrCat(
            "duplicate tensor: ", OpLabel(op, i), " writes '", out, "', which is a graph input or weight"));
      if (!producer.emplace(out, i).second)
        return absl::InvalidArgumentError(absl::StrCat("duplicate tensor: '", out, "' is produced by ",
                                                       OpLabel(g.ops[producer[out]], producer[out]),
                                                       " and ", OpLabel(op, i)));
    }
  }
  // Dependencies, then Kahn's algorithm (stable: lowest index first among ready ops).
  std::vector<std::vector<size_t>> users(g.ops.size());
  std::vector<int> pending(g.ops.size(), 0);
  for (size_t i = 0; i < g.ops.size(); ++i) {
    for (const auto& in : g.ops[i].inputs) {
      if (in.empty()) continue;
      if (!declared.count(in))
        return absl::InvalidArgumentError(
            absl::StrCat("dangling tensor: ", OpLabel(g.ops[i], i), " reads undeclared '", in, "'"));
      if (sources.count(in)) continue;
      auto it = producer.find(in);
      if (it == producer.end())
        return absl::InvalidArgumentError(absl::StrCat("dangling tensor: ", OpLabel(g.ops[i], i), " reads '",
                                                       in, "', which no op produces and is not an input or weight"));
      users[it->second].push_back(i);
      ++pending[i];
    }
  }
  for (const auto& out : g.outputs)
    if (!declared.count(out) || (!producer.count(out) && !sources.count(out)))
      return absl::InvalidArgumentError(absl::StrCat("dangling tensor: graph output '", out, "' is never produced"));

  std::vector<size_t> order;
  std::vector<size_t> ready;
  for (size_t i = 0; i < g.ops.size(); ++i)
    if (!pending[i]) ready.push_back(i);
  std::make_heap(ready.begin(), ready.end(), std::greater<>());
  while (!ready.empty()) {
    std::pop_heap(ready.begin(), ready.end(), std::greater<>());
    size_t i = ready.back();
    ready.pop_back();
    order.push_back(i);
    for (size_t u : users[i])
      if (--pending[u] == 0) {
        ready.push_back(u);
        std::push_heap(ready.begin(), ready.end(), std::greater<>());
      }
  }
  if (order.size() != g.ops.size()) {
    for (size_t i = 0; i < g.ops.size(); ++i)
      if (pending[i])
        return absl::InvalidArgumentError(absl::StrCat("cycle: ", OpLabel(g.ops[i], i),
                                                       " depends on its own output through ", pending[i],
                                                       " unresolved input(s)"));
  }
  // Shape inference in execution order, checked against the declarations.
  for (size_t i : order) {
    const Op& op = g.ops[i];
    std::vector<const Shape*> in;
    for (const auto& n : op.inputs) in.push_back(n.empty() ? nullptr : &declared[n]->shape);
    while (in.size() < static_cast<size_t>(FindOp(op.type)->max_inputs)) in.push_back(nullptr);
    auto shapes = FindOp(op.type)->infer(op, in);
    if (!shapes.ok()) {
      std::string msg(shapes.status().message());
      return absl::InvalidArgumentError(msg);
    }
    if (shapes->size() != op.outputs.size())
      return absl::InvalidArgumentError(absl::StrCat("bad arity: ", OpLabel(op, i), " has ", op.outputs.size(),
                                                     " outputs; its operands give ", shapes->size()));
    for (size_t k = 0; k < op.outputs.size(); ++k) {
      const Tensor& t = *declared[op.outputs[k]];
      if (t.shape != (*shapes)[k])
        return absl::InvalidArgumentError(absl::StrCat("shape mismatch: ", OpLabel(op, i), " output '", t.name,
                                                       "' declared ", ShapeString(t.shape), " but infers ",
                                                       ShapeString((*shapes)[k])));
    }
  }
  return order;
}

}  // namespace uaii::ir
