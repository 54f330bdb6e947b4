// The logits of one fixed run — a prompt prefilled, then two decode steps, every row —
// under a memory budget (0: none), for the tests that compare a streamed session with
// a resident one bit for bit.
#pragma once
#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "uaii/session.h"

namespace uaii::testing {

inline std::vector<float> PromptThenDecodes(const std::shared_ptr<const Model>& m, uint64_t budget,
                                            const std::vector<TokenId>& prompt, StorageStats* stats) {
  SessionOptions o;
  o.max_context = 128;
  o.threads = 2;
  o.ram_budget_bytes = budget;
  if (budget > 0) o.kv_window = 0;  // unbounded: the same cells as the resident run
  auto s = Session::Create(m, o);
  INFO(s.status().ToString());
  REQUIRE(s.ok());
  auto all = (*s)->Eval(prompt, /*all_logits=*/true);
  REQUIRE(all.ok());
  std::vector<float> out = *all;
  for (TokenId t : {TokenId{7}, TokenId{11}}) {
    auto d = (*s)->Decode(t);
    REQUIRE(d.ok());
    out.insert(out.end(), d->begin(), d->end());
  }
  *stats = (*s)->storage_stats();
  return out;
}

}  // namespace uaii::testing
