/* The C ABI header, from the repository (bindings/swift/Sources/CUaii -> capi/). An
 * xcframework build copies uaii.h next to this file instead (docs/swift.md). */
#if __has_include("uaii.h")
#include "uaii.h"
#else
#include "../../../../capi/uaii.h"
#endif
