// IR serialization through FlatBuffers (schemas/uaii_ir.fbs): the binary `.uaii`
// buffer (identifier "UAIR") and its readable JSON form `.uaii.json`, produced and
// parsed by FlatBuffers' own text support against the same schema.
//
// Version and alignment: `Model.format_version` is kFormatVersion (readers refuse
// any other). The file is the FlatBuffer itself, byte for byte: identifier "UAIR" at
// bytes 4..8, scalars aligned to their size inside the buffer, hence 8-byte alignment
// for the buffer start (long / ulong fields). FromBinary copies a misaligned buffer
// before verifying, so callers may pass any bytes (e.g. a slice of a mapping).
// Every binary buffer passes FlatBuffers' Verifier before a field is read.
//
// Floats: float attributes are written in JSON as the shortest text that reads back
// to the same double, so .uaii -> .uaii.json -> .uaii gives identical bytes.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace uaii::ir {

inline constexpr uint32_t kFormatVersion = 1;

std::string_view SchemaText();  // the .fbs the library was built with

absl::StatusOr<std::string> ToBinary(const Graph& g);  // verified FlatBuffer bytes
absl::StatusOr<Graph> FromBinary(std::string_view bytes);
absl::StatusOr<std::string> ToJson(const Graph& g);
absl::StatusOr<Graph> FromJson(std::string_view json);

// Graph files: a path ending in ".uaii.json" is the JSON form, ".uaii" the binary one.
bool IsGraphPath(std::string_view path);
absl::StatusOr<Graph> ReadGraphFile(const std::string& path);
// Writes through a temporary file and a rename, so readers never see half a file.
absl::Status WriteGraphFile(const Graph& g, const std::string& path);

}  // namespace uaii::ir
