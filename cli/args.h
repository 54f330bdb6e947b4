// Minimal flag parsing shared by every subcommand: `--name value`, `--name=value`,
// boolean `--flag`, and positional arguments. Unknown flags are errors.
#pragma once
#include <charconv>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace uaii::cli {

struct FlagSpec {
  std::set<std::string> valued = {};  // flags that take a value ("--model")
  std::set<std::string> boolean = {}; // flags without one ("--json")
  std::set<std::string> repeated = {};  // valued flags that may appear more than once
};

struct Args {
  std::map<std::string, std::vector<std::string>> values;
  std::set<std::string> flags;
  std::vector<std::string> positional;

  bool has(const std::string& f) const { return flags.count(f) || values.count(f); }
  // Last value of a valued flag, or `fallback`.
  std::string get(const std::string& f, const std::string& fallback = "") const;
  const std::vector<std::string>& all(const std::string& f) const;
};

absl::StatusOr<Args> ParseArgs(int argc, char** argv, const FlagSpec& spec);

// A flag's value as a number: true when the whole of `s` is one (std::from_chars).
template <typename T>
bool ParseNumber(const std::string& s, T* v) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), *v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

}  // namespace uaii::cli
