#include "models/graph_builder.h"

#include "ir/registry.h"
#include "ir/validate.h"
#include "util/str_cat.h"

namespace uaii::models {

GraphBuilder::GraphBuilder(const ModelSpec& spec) : spec_(spec) { graph_.name = spec.arch; }

std::string GraphBuilder::OptionalWeight(const std::string& name) {
  if (index_.count(name)) return name;
  const SpecTensor* t = spec_.Find(name);
  if (!t) return "";
  index_[name] = graph_.tensors.size();
  graph_.tensors.push_back({name, t->dtype, t->shape, ir::TensorRef{spec_.file, name, t->offset, t->bytes}});
  return name;
}

std::string GraphBuilder::Weight(const std::string& name) {
  std::string n = OptionalWeight(name);
  if (n.empty() && status_.ok())
    status_ = absl::NotFoundError(StrCat(spec_.file, ": tensor ", name, " is missing (architecture ", spec_.arch, ")"));
  return n.empty() ? name : n;
}

std::string GraphBuilder::OptionalWeight(const std::string& name, const ir::Shape& shape) {
  std::string n = OptionalWeight(name);
  if (!n.empty() && status_.ok() && ShapeOf(n) != shape)
    status_ = absl::InvalidArgumentError(StrCat(spec_.file, ": tensor ", name, " has shape ",
                                                ir::ShapeString(ShapeOf(n)), ", expected ", ir::ShapeString(shape),
                                                " (architecture ", spec_.arch, ")"));
  return n;
}

std::string GraphBuilder::Weight(const std::string& name, const ir::Shape& shape) {
  Weight(name);                  // records a missing tensor
  OptionalWeight(name, shape);   // records a shape mismatch
  return name;
}

void GraphBuilder::Unused(const std::string& name, const ir::Shape& shape, const std::string& why) {
  const SpecTensor* t = spec_.Find(name);
  if (!t) return;
  if (t->shape != shape && status_.ok())
    status_ = absl::InvalidArgumentError(StrCat(spec_.file, ": tensor ", name, " has shape ", ir::ShapeString(t->shape),
                                                ", expected ", ir::ShapeString(shape), " (architecture ", spec_.arch,
                                                ")"));
  graph_.metadata.emplace_back(StrCat(kUnusedTensorMeta, name), why);
}

std::string GraphBuilder::ExternalWeight(const ModelSpec& other, const std::string& name, const ir::Shape& shape) {
  const std::string as = StrCat(other.arch, ":", name);
  if (index_.count(as)) return as;
  const SpecTensor* t = other.Find(name);
  if (!t) {
    if (status_.ok()) status_ = absl::NotFoundError(StrCat(other.file, ": tensor ", name, " is missing"));
    return as;
  }
  if (t->shape != shape && status_.ok())
    status_ = absl::InvalidArgumentError(StrCat(other.file, ": tensor ", name, " has shape ", ir::ShapeString(t->shape),
                                                ", expected ", ir::ShapeString(shape)));
  index_[as] = graph_.tensors.size();
  graph_.tensors.push_back({as, t->dtype, t->shape, ir::TensorRef{other.file, name, t->offset, t->bytes}});
  return as;
}

std::string GraphBuilder::Input(const std::string& name, TensorType dtype, ir::Shape shape) {
  index_[name] = graph_.tensors.size();
  graph_.tensors.push_back({name, dtype, std::move(shape), std::nullopt});
  graph_.inputs.push_back(name);
  return name;
}

const ir::Shape& GraphBuilder::ShapeOf(const std::string& tensor) const {
  static const ir::Shape kNone;
  auto it = index_.find(tensor);
  return it == index_.end() ? kNone : graph_.tensors[it->second].shape;
}

std::string GraphBuilder::Op(const std::string& type, std::vector<std::string> inputs, const std::string& out,
                             std::map<std::string, ir::AttrValue> attrs) {
  ir::Op op{out, type, std::move(inputs), {out}, std::move(attrs)};
  ir::Shape shape;
  if (status_.ok()) {
    const ir::OpSchema* s = ir::FindOp(type);
    std::vector<const ir::Shape*> in;
    for (const auto& n : op.inputs) in.push_back(n.empty() || !index_.count(n) ? nullptr : &ShapeOf(n));
    while (s && in.size() < static_cast<size_t>(s->max_inputs)) in.push_back(nullptr);
    bool have_required = s != nullptr;
    for (int k = 0; s && k < s->min_inputs && k < static_cast<int>(in.size()); ++k) have_required &= in[k] != nullptr;
    if (!have_required) {
      status_ = absl::InternalError(StrCat("model builder: op ", out, " (", type, ") lacks an input"));
    } else {
      auto shapes = s->infer(op, in);
      if (!shapes.ok()) status_ = shapes.status();
      else shape = (*shapes)[0];
    }
  }
  index_[out] = graph_.tensors.size();
  graph_.tensors.push_back({out, TensorType::F32, shape, std::nullopt});
  graph_.ops.push_back(std::move(op));
  return out;
}

absl::StatusOr<ir::Graph> GraphBuilder::Finish(std::vector<std::string> outputs) {
  if (!status_.ok()) return status_;
  graph_.outputs = std::move(outputs);
  if (auto order = ir::Validate(graph_); !order.ok()) return order.status();
  return std::move(graph_);
}

}  // namespace uaii::models
