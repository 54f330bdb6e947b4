// uaii::ProgressBar: one line on stderr that redraws itself — a name, a bar, the
// percentage, MiB done of the total, the rate and the time left — drawn only when
// stderr is a terminal (and the caller enables it), at most every 100 ms. `uaii pull`
// draws one per file, the CLI's model loading one while the weights are prepared.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

namespace uaii {

class ProgressBar {
 public:
  ProgressBar(std::string name, bool enabled);
  // done of total bytes (total 0: unknown). The rate counts from the first call.
  void Update(uint64_t done, uint64_t total);
  // Clears the bar, then prints `note` and a newline unless it is empty.
  void Done(const std::string& note);
  bool drawing() const { return tty_; }

 private:
  std::string name_;
  bool tty_;
  bool drawn_ = false;
  bool started_ = false;
  uint64_t start_bytes_ = 0;
  std::chrono::steady_clock::time_point start_{}, last_{};
};

}  // namespace uaii
