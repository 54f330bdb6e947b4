// Encode throughput of uaii::Tokenizer: bench_tokenizer TOKENIZER_PATH TEXT_FILE [REPS]
// Prints "MB/s ids" for the best of REPS single-threaded runs.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "uaii/tokenizer.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: bench_tokenizer TOKENIZER_PATH TEXT_FILE [REPS]\n");
    return 2;
  }
  auto tok = uaii::Tokenizer::Load(argv[1]);
  if (!tok.ok()) {
    std::fprintf(stderr, "%s\n", std::string(tok.status().message()).c_str());
    return 1;
  }
  std::ifstream f(argv[2], std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string text = ss.str();
  const int reps = argc > 3 ? std::atoi(argv[3]) : 3;
  double best = 1e30;
  size_t n = 0;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    auto ids = (*tok)->Encode(text, {.parse_special = true, .add_special = false});
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, s);
    n = ids->size();
  }
  std::printf("%.2f %zu\n", text.size() / 1e6 / best, n);
  return 0;
}
