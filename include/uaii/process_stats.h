// Process figures every `--json` and the C ABI report.
#pragma once
#include <cstdint>

namespace uaii {

// Peak resident set size of this process, in bytes, as the OS measures it.
int64_t PeakRssBytes();

}  // namespace uaii
