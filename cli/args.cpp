#include "args.h"

#include "uaii/str_cat.h"

namespace uaii::cli {

std::string Args::get(const std::string& f, const std::string& fallback) const {
  auto it = values.find(f);
  return it == values.end() || it->second.empty() ? fallback : it->second.back();
}

const std::vector<std::string>& Args::all(const std::string& f) const {
  static const std::vector<std::string> kEmpty;
  auto it = values.find(f);
  return it == values.end() ? kEmpty : it->second;
}

absl::StatusOr<Args> ParseArgs(int argc, char** argv, const FlagSpec& spec) {
  Args args;
  bool only_positional = false;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (only_positional || a.size() < 2 || a.rfind("--", 0) != 0) {
      args.positional.push_back(a);
      continue;
    }
    if (a == "--") { only_positional = true; continue; }
    std::string name = a, value;
    bool has_value = false;
    if (auto eq = a.find('='); eq != std::string::npos) {
      name = a.substr(0, eq);
      value = a.substr(eq + 1);
      has_value = true;
    }
    if (spec.boolean.count(name)) {
      if (has_value) return absl::InvalidArgumentError(StrCat(name, " takes no value"));
      args.flags.insert(name);
    } else if (spec.valued.count(name) || spec.repeated.count(name)) {
      if (!has_value) {
        if (i + 1 >= argc) return absl::InvalidArgumentError(StrCat(name, " needs a value"));
        value = argv[++i];
      }
      auto& slot = args.values[name];
      if (!slot.empty() && !spec.repeated.count(name))
        return absl::InvalidArgumentError(StrCat(name, " given more than once"));
      slot.push_back(value);
    } else {
      return absl::InvalidArgumentError(StrCat("unknown option ", name));
    }
  }
  return args;
}

}  // namespace uaii::cli
