/* Preloaded (LD_PRELOAD) in front of libuaii by the SDK tests: reports C ABI 0.6.0, so each
 * SDK's load-time version check must refuse the library with a clear message. */
#include <stdint.h>

uint32_t uaii_capi_version(void) { return 600; }
const char* uaii_capi_version_string(void) { return "0.6.0"; }
