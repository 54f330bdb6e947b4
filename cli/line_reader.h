// The interactive chat's line input. Built with libedit (CMake option UAII_LIBEDIT,
// which defines UAII_HAVE_LIBEDIT), a terminal gets line editing and history; without
// it, or when stdin is not a terminal, lines are read with std::getline (a terminal
// still sees the prompt). Either way the caller's SIGINT handler (installed without
// SA_RESTART) interrupts the wait: Read then returns an empty line, not the end.
#pragma once
#include <atomic>
#include <optional>
#include <string>

namespace uaii::cli {

class LineReader {
 public:
  // `tty`: stdin is a terminal. `interrupted`: the flag the SIGINT handler sets.
  LineReader(bool tty, std::atomic<bool>& interrupted);
  // The next line without its newline; nullopt at the end of input.
  std::optional<std::string> Read(const char* prompt);
  // Remembers a line for the history (line editing only; otherwise nothing).
  void Remember(const std::string& line);
  // Whether this build edits lines (libedit).
  static bool line_editing();

 private:
  bool tty_;
  std::atomic<bool>& interrupted_;
};

}  // namespace uaii::cli
