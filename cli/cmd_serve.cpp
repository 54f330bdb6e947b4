// `uaii serve [--model PATH] [--host 127.0.0.1] [--port 8080] [--parallel N] [--api-key KEY]
//             [memory flags as generate]`: the OpenAI-compatible server (server/, docs/serving.md).
// It listens at once and loads the model in the background (/health: 503, then 200);
// SIGINT / SIGTERM stop it, cancelling the generations in flight.
#include <malloc.h>
#include <signal.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "args.h"
#include "commands.h"
#include "storage_report.h"
#include "uaii/model_locator.h"
#include "uaii/str_cat.h"
#ifdef UAII_HAVE_SERVER
#include "http_server.h"
#endif

namespace uaii::cli {
namespace {

constexpr char kUsage[] =
    "usage: uaii serve [--model PATH] [--host 127.0.0.1] [--port 8080] [--parallel N] [--api-key KEY]\n"
    "                  [--chat-template FILE] [--threads N (shared by the slots) | --threads-per-slot N]\n"
    "                  [--no-batch (the slots' steps run one pass each, not batched)]\n"
    "                  [--max-context N (per slot)]\n"
    "                  [--preset laptop|desktop|server|phone|none|off] [--ram-gb N] [--kv-window N]\n"
    "                  [--moe-top-k K] [--moe-prefetch on|off] [--device auto|cpu|vulkan[:N]] [--vram-gb N]\n"
    "                  [--max-queue N] [--max-tokens N] [--max-messages N] [--max-body-mb N] [--timeout SECONDS]\n"
    "  routes: POST /v1/chat/completions, /v1/completions, /tokenize, /detokenize;\n"
    "          GET /v1/models, /health, /metrics (Prometheus), / (dashboard)\n";

}  // namespace

const char* const kServeUsage = kUsage;

int RunServe(int argc, char** argv) {
  auto args = ParseArgs(argc, argv,
                        {.valued = {"--model", "--host", "--port", "--parallel", "--api-key", "--chat-template", "--threads", "--threads-per-slot",
                                    "--max-context", "--preset", "--ram-gb", "--kv-window", "--moe-top-k",
                                    "--moe-prefetch", "--device", "--vram-gb", "--max-queue", "--max-tokens", "--max-messages", "--max-body-mb",
                                    "--timeout"},
                         .boolean = {"--no-batch"}});
  auto usage = [](const std::string& why) {
    std::fprintf(stderr, "uaii serve: %s\n%s", why.c_str(), kUsage);
    return 2;
  };
  if (!args.ok()) return usage(std::string(args.status().message()));
  if (!args->positional.empty()) return usage(StrCat("unexpected argument '", args->positional[0], "'"));
#ifndef UAII_HAVE_SERVER
  std::fprintf(stderr, "uaii serve: this build has no server: install libcpp-httplib-dev and rebuild "
                       "(docs/building.md, UAII_SERVER)\n");
  return 1;
#else
  server::ServeOptions o;
  int64_t port = 8080, parallel = 1, threads = 0, threads_per_slot = 0, max_context = 0, max_queue = 64, max_tokens = 4096,
          max_messages = 1024, max_body_mb = 8;
  double timeout = 600;
  struct IntFlag { const char* name; int64_t* out; int64_t lo, hi; };
  for (const IntFlag& f : {IntFlag{"--port", &port, 0, 65535}, IntFlag{"--parallel", &parallel, 1, 256},
                           IntFlag{"--threads", &threads, 0, 4096}, IntFlag{"--threads-per-slot", &threads_per_slot, 1, 4096}, IntFlag{"--max-context", &max_context, 0, 1 << 24},
                           IntFlag{"--max-queue", &max_queue, 0, 100000}, IntFlag{"--max-tokens", &max_tokens, 1, 1 << 24},
                           IntFlag{"--max-messages", &max_messages, 1, 1 << 20},
                           IntFlag{"--max-body-mb", &max_body_mb, 1, 4096}}) {
    if (!args->has(f.name)) continue;
    if (!ParseNumber(args->get(f.name), f.out) || *f.out < f.lo || *f.out > f.hi)
      return usage(StrCat(f.name, " takes an integer in ", f.lo, "..", f.hi));
  }
  if (args->has("--timeout") && (!ParseNumber(args->get("--timeout"), &timeout) || !(timeout > 0)))
    return usage("--timeout takes a positive number of seconds");
  o.session.preset = Preset::kLaptop;  // the CLI's default, as generate's
  if (auto st = MemoryOptionsFromArgs(*args, &o.session); !st.ok()) return usage(std::string(st.message()));
  auto path = ResolveModelPath(args->get("--model"));
  if (!path.ok()) {
    std::fprintf(stderr, "uaii serve: %s\n", std::string(path.status().message()).c_str());
    return 1;
  }
  o.model_path = *path;
  o.chat_template_path = args->get("--chat-template");
  o.host = args->get("--host", "127.0.0.1");
  o.port = static_cast<int>(port);
  o.parallel = static_cast<int>(parallel);
  o.api_key = args->get("--api-key");
  if (o.api_key.empty())
    if (const char* env = std::getenv("UAII_API_KEY")) o.api_key = env;
  if (args->has("--threads") && args->has("--threads-per-slot"))
    return usage("--threads (shared by the slots) and --threads-per-slot exclude each other");
  o.session.threads = static_cast<int>(threads);
  o.threads_per_slot = static_cast<int>(threads_per_slot);
  o.batch_steps = !args->has("--no-batch");
  o.session.max_context = max_context;
  o.max_queue = static_cast<size_t>(max_queue);
  o.limits.max_tokens = max_tokens;
  o.limits.max_messages = static_cast<size_t>(max_messages);
  o.max_body_bytes = static_cast<size_t>(max_body_mb) << 20;
  o.request_timeout_s = timeout;
  if (const char* delay = std::getenv("UAII_SERVE_LOAD_DELAY_MS")) o.load_delay_ms = std::atoi(delay);
  o.log = [](std::string_view line) {
    std::fprintf(stderr, "uaii serve: %.*s\n", static_cast<int>(line.size()), line.data());
    std::fflush(stderr);
  };

  // Signals go to this thread's sigwait alone (every thread the server starts inherits the mask).
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a client that left must not end the server
#ifdef M_ARENA_MAX
  // glibc gives each new thread that allocates a malloc arena of its own (up to 8 per
  // core), and an arena keeps what its thread freed: with a thread per connection the
  // resident set crept up by megabytes as more request threads took their turn (the
  // bounded-load test: 2-7 MiB over 80 requests, flat with 2 arenas). Two arenas, as
  // long-running servers are commonly told; MALLOC_ARENA_MAX in the environment wins.
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, 2);
#endif

  server::Server srv(o);
  if (auto st = srv.Start(); !st.ok()) {
    std::fprintf(stderr, "uaii serve: %s\n", std::string(st.message()).c_str());
    return 1;
  }
  std::fprintf(stderr, "uaii serve: listening on http://%s:%d (dashboard at /), loading %s\n", o.host.c_str(),
               srv.port(), o.model_path.c_str());
  bool load_failed = false;
  std::thread watch([&] {
    if (auto st = srv.WaitUntilLoaded(); !st.ok() && !absl::IsCancelled(st)) {
      std::fprintf(stderr, "uaii serve: %s\n", std::string(st.message()).c_str());
      load_failed = true;
      kill(getpid(), SIGTERM);
    }
  });
  int sig = 0;
  sigwait(&stop_signals, &sig);
  std::fprintf(stderr, "uaii serve: stopping\n");
  srv.Stop();
  watch.join();
  return load_failed ? 1 : 0;
#endif
}

}  // namespace uaii::cli
