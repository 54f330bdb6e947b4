// IR serialization through FlatBuffers (schemas/uaii_ir.fbs): the binary `.uaii`
// buffer (identifier "UAIR") and its readable JSON form `.uaii.json`, produced and
// parsed by FlatBuffers' own text support against the same schema.
//
// Floats: JSON carries 12 significant digits (FlatBuffers' default), which restores
// every float32 value exactly; the runtime reads attributes as float32.
#pragma once
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace uaii::ir {

std::string_view SchemaText();  // the .fbs the library was built with

absl::StatusOr<std::string> ToBinary(const Graph& g);  // verified FlatBuffer bytes
absl::StatusOr<Graph> FromBinary(std::string_view bytes);
absl::StatusOr<std::string> ToJson(const Graph& g);
absl::StatusOr<Graph> FromJson(std::string_view json);

}  // namespace uaii::ir
