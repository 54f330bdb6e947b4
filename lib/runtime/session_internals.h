// The library's access to a Session's internals (Session::Impl is private to the public
// header): a drafter that attends over its target's KV cache (the gemma4 assistant)
// reads the target session's cache and runs on its threads.
#pragma once
#include "kernels/thread_pool.h"
#include "runtime/kv_cache.h"
#include "uaii/session.h"

namespace uaii {

struct SessionInternals {
  static runtime::KvCache& Cache(const Session& s);
  static ThreadPool* Pool(const Session& s);
};

}  // namespace uaii
