#include "uaii/process_stats.h"

#include <sys/resource.h>

namespace uaii {

int64_t PeakRssBytes() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<int64_t>(ru.ru_maxrss) * 1024;  // Linux reports KiB
}

}  // namespace uaii
