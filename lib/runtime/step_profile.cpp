#include "runtime/step_profile.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string_view>

#include "util/str_cat.h"

namespace uaii::runtime {

struct StepProfile::Impl {
  std::mutex mu;  // sessions may run on several threads
  struct Phase {
    int64_t runs = 0, tokens = 0;
    double total = 0;
    std::map<std::string, std::pair<double, int64_t>> by_kind;  // seconds, steps
  };
  Phase decode, prefill;  // runs of one token, and of more
};

StepProfile* StepProfile::Get() {
  static StepProfile* profile = [] {
    const char* v = std::getenv("UAII_PROFILE_STEPS");
    if (v == nullptr || *v == '\0' || *v == '0') return static_cast<StepProfile*>(nullptr);
    static StepProfile p(std::string_view(v) == "ops");
    p.print_at_exit_ = true;
    return &p;
  }();
  return profile;
}

void StepProfile::AddRun(int64_t tokens) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  Impl::Phase& ph = tokens == 1 ? impl_->decode : impl_->prefill;
  ++ph.runs;
  ph.tokens += tokens;
}

namespace {
// "blk.12.attn_out" -> "blk.*.attn_out": a layer's op with its kind in every layer.
std::string LayerlessName(const std::string& name) {
  if (name.rfind("blk.", 0) != 0) return name;
  size_t i = 4;
  while (i < name.size() && name[i] >= '0' && name[i] <= '9') ++i;
  return i > 4 ? "blk.*" + name.substr(i) : name;
}
}  // namespace

void StepProfile::AddStep(const std::string& kind, const std::string& name, int64_t tokens, double seconds) {
  const std::string key = by_op_ ? StrCat(kind, " ", LayerlessName(name)) : kind;
  std::lock_guard<std::mutex> lock(impl_->mu);
  Impl::Phase& ph = tokens == 1 ? impl_->decode : impl_->prefill;
  auto& [s, steps] = ph.by_kind[key];
  s += seconds;
  ++steps;
  ph.total += seconds;
}

std::string StepProfile::Report() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::string out;
  for (const auto* ph : {&impl_->decode, &impl_->prefill}) {
    if (ph->runs == 0) continue;
    const double per = 1e3 / static_cast<double>(ph->tokens);
    out += StrCat("uaii step profile, ", ph == &impl_->decode ? "decode" : "prefill", ": ", ph->runs, " runs, ",
                  ph->tokens, " tokens, ", ph->total * per, " ms per token in steps\n");
    for (const auto& [kind, v] : ph->by_kind) {
      char line[160];
      std::snprintf(line, sizeof line, "  %-*s %9.3f ms/token %5.1f%%  %7.1f steps/run\n", by_op_ ? 40 : 14,
                    kind.c_str(),
                    v.first * per, 100.0 * v.first / ph->total,
                    static_cast<double>(v.second) / static_cast<double>(ph->runs));
      out += line;
    }
  }
  return out;
}

StepProfile::StepProfile(bool by_op) : impl_(std::make_unique<Impl>()), by_op_(by_op) {}

StepProfile::~StepProfile() {
  if (print_at_exit_) std::fputs(Report().c_str(), stderr);
}

}  // namespace uaii::runtime
