#include "uaii/progress_bar.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace uaii {
namespace {

std::string Mib(uint64_t b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(b) / (1 << 20));
  return buf;
}

}  // namespace

ProgressBar::ProgressBar(std::string name, bool enabled) : name_(std::move(name)), tty_(enabled && ::isatty(2)) {}

void ProgressBar::Update(uint64_t done, uint64_t total) {
  if (!tty_) return;
  auto now = std::chrono::steady_clock::now();
  if (!started_) {
    started_ = true;
    start_ = now;
    start_bytes_ = done;
  }
  if (now - last_ < std::chrono::milliseconds(100) && done != total) return;
  last_ = now;
  constexpr int kWidth = 30;
  const double frac = total ? std::min(1.0, static_cast<double>(done) / total) : 0.0;
  std::string bar(static_cast<size_t>(frac * kWidth), '#');
  bar.resize(kWidth, ' ');
  const double seconds = std::chrono::duration<double>(now - start_).count();
  const double rate = seconds > 0 ? static_cast<double>(done - std::min(done, start_bytes_)) / seconds : 0.0;
  std::string speed;
  if (rate > 0) {
    char buf[64];
    const double left = total > done ? static_cast<double>(total - done) / rate : 0.0;
    const long eta = static_cast<long>(left + 0.5);
    std::snprintf(buf, sizeof buf, " %.1f MiB/s ETA %ld:%02ld", rate / (1 << 20), eta / 60, eta % 60);
    speed = buf;
  }
  std::fprintf(stderr, "\r%-40.40s [%s] %3d%% %s / %s%s\033[K", name_.c_str(), bar.c_str(),
               static_cast<int>(frac * 100), Mib(done).c_str(), total ? Mib(total).c_str() : "?", speed.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::Done(const std::string& note) {
  if (tty_ && drawn_) std::fprintf(stderr, "\r\033[K");
  if (!note.empty()) std::fprintf(stderr, "%s\n", note.c_str());
}

}  // namespace uaii
