#include "runtime/step_profile.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

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
    static StepProfile p;
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

void StepProfile::AddStep(const std::string& kind, int64_t tokens, double seconds) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  Impl::Phase& ph = tokens == 1 ? impl_->decode : impl_->prefill;
  auto& [s, steps] = ph.by_kind[kind];
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
      std::snprintf(line, sizeof line, "  %-14s %9.3f ms/token %5.1f%%  %7.1f steps/run\n", kind.c_str(),
                    v.first * per, 100.0 * v.first / ph->total,
                    static_cast<double>(v.second) / static_cast<double>(ph->runs));
      out += line;
    }
  }
  return out;
}

StepProfile::StepProfile() : impl_(std::make_unique<Impl>()) {}

StepProfile::~StepProfile() {
  if (print_at_exit_) std::fputs(Report().c_str(), stderr);
}

}  // namespace uaii::runtime
