// uaii's side of the speed benchmark: prefill a prompt of N tokens, then decode M
// tokens one at a time, on a Session; prints one JSON line. Token ids are synthetic
// (the same ids llama.cpp gets in benchmarks/bench_vs_llamacpp.py), so the work is
// exactly prefill + decode, with nothing from tokenization or sampling.
//   uaii_bench_generate MODEL [--prompt N] [--gen M] [--threads T] [--probe CMD [--probe-every K]]
// --probe runs CMD (a uaii_bench_membw command line) just before and just after the
// decode and reports its read bandwidth both times: the memory bandwidth of the same
// seconds as the decode, for its roofline (the machine's bandwidth drifts by a third
// from minute to minute, so a probe taken elsewhere in the run says little).
// --probe-every K also probes after every K decoded tokens, and reports each block of
// K tokens with its seconds and the probes on either side ("blocks": [tokens, seconds,
// GB/s before, GB/s after]): on a shared VM the bandwidth can move by almost half
// within seconds, so each block is held to the probes next to it. The decode's
// tokens/s counts the blocks' seconds only.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "uaii/process_stats.h"
#include "uaii/session.h"

namespace {

// Runs the probe command and returns the read_gb_per_s of its JSON line (0 on failure).
double ProbeBandwidth(const std::string& cmd) {
  double gbps = 0;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char line[512];
    while (std::fgets(line, sizeof line, p))
      if (const char* k = std::strstr(line, "\"read_gb_per_s\":")) gbps = std::atof(k + 16);
    ::pclose(p);
  }
  return gbps;
}

int Fail(const absl::Status& st) {
  std::fprintf(stderr, "%s\n", std::string(st.message()).c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: uaii_bench_generate MODEL [--prompt N] [--gen M] [--threads T]"
                 " [--probe CMD [--probe-every K]]\n");
    return 2;
  }
  int64_t n_prompt = 512, n_gen = 128;
  int threads = 2;
  std::string probe;
  int64_t probe_every = 0;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--prompt")) n_prompt = std::atoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--gen")) n_gen = std::atoll(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--threads")) threads = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--probe")) probe = argv[i + 1];
    else if (!std::strcmp(argv[i], "--probe-every")) probe_every = std::atoll(argv[i + 1]);
  }
  auto model = uaii::Model::Load(argv[1]);
  if (!model.ok()) return Fail(model.status());
  uaii::SessionOptions so;
  so.threads = threads;
  so.max_context = n_prompt + n_gen + 1;
  so.prefill_chunk = 512;
  auto session = uaii::Session::Create(*model, so);
  if (!session.ok()) return Fail(session.status());
  const int64_t vocab = (*model)->info().n_vocab;
  std::vector<uaii::TokenId> prompt(n_prompt);
  for (int64_t i = 0; i < n_prompt; ++i) prompt[i] = static_cast<uaii::TokenId>(300 + (i * 7919) % (vocab - 300));
  using Clock = std::chrono::steady_clock;
  auto t0 = Clock::now();
  auto logits = (*session)->Eval(prompt);
  auto t1 = Clock::now();
  if (!logits.ok()) return Fail(logits.status());
  const double bw_before = probe.empty() ? 0 : ProbeBandwidth(probe);
  const int64_t block = probe_every > 0 && !probe.empty() ? probe_every : n_gen;
  double decode = 0, bw = bw_before;
  std::string blocks;
  std::vector<float> step_logits;
  for (int64_t i0 = 0; i0 < n_gen; i0 += block) {
    const int64_t i1 = std::min(n_gen, i0 + block);
    const auto b0 = Clock::now();
    for (int64_t i = i0; i < i1; ++i)  // as the generation loop decodes (generation/generator.cpp)
      if (absl::Status st = (*session)->DecodeInto(static_cast<uaii::TokenId>(300 + i % 1000), &step_logits); !st.ok())
        return Fail(st);
    const double secs = std::chrono::duration<double>(Clock::now() - b0).count();
    decode += secs;
    const double bw_next = probe.empty() ? 0 : ProbeBandwidth(probe);
    char one[128];
    std::snprintf(one, sizeof one, "%s[%lld, %.6f, %.2f, %.2f]", blocks.empty() ? "" : ", ",
                  static_cast<long long>(i1 - i0), secs, bw, bw_next);
    blocks += one;
    bw = bw_next;
  }
  const double bw_after = bw;
  double prefill = std::chrono::duration<double>(t1 - t0).count();
  std::printf("{\"prefill_tokens_per_s\": %.3f, \"decode_tokens_per_s\": %.3f, \"peak_rss_bytes\": %lld, "
              "\"bandwidth_before_gb_s\": %.2f, \"bandwidth_after_gb_s\": %.2f, \"blocks\": [%s]}\n",
              n_prompt / prefill, n_gen / decode, (long long)uaii::PeakRssBytes(), bw_before, bw_after,
              blocks.c_str());
  return 0;
}
