#include "line_reader.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>

#if UAII_HAVE_LIBEDIT
#include <editline/readline.h>
#endif

namespace uaii::cli {

LineReader::LineReader(bool tty, std::atomic<bool>& interrupted) : tty_(tty), interrupted_(interrupted) {
#if UAII_HAVE_LIBEDIT
  if (tty_) using_history();
#endif
}

bool LineReader::line_editing() {
#if UAII_HAVE_LIBEDIT
  return true;
#else
  return false;
#endif
}

std::optional<std::string> LineReader::Read(const char* prompt) {
  interrupted_ = false;
#if UAII_HAVE_LIBEDIT
  if (tty_) {
    char* raw = readline(prompt);
    if (!raw) {
      if (interrupted_.exchange(false)) {
        std::printf("\n");
        return std::string();
      }
      return std::nullopt;
    }
    std::string line(raw);
    std::free(raw);
    return line;
  }
#endif
  if (tty_) {
    std::fputs(prompt, stdout);
    std::fflush(stdout);
  }
  std::string line;
  if (std::getline(std::cin, line)) return line;
  // Ctrl-C at the prompt fails the read with EINTR: an empty line, and reading goes on.
  if (tty_ && interrupted_.exchange(false)) {
    std::cin.clear();
    std::clearerr(stdin);
    std::printf("\n");
    return std::string();
  }
  return std::nullopt;
}

void LineReader::Remember(const std::string& line) {
#if UAII_HAVE_LIBEDIT
  if (tty_) add_history(line.c_str());
#else
  (void)line;
#endif
}

}  // namespace uaii::cli
