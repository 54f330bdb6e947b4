/* The C ABI header. In a checkout, the source tree's own (bindings/swift/Sources/CUaii ->
 * capi/), so the SDK always compiles against the header of the library it is tested
 * with; otherwise uaii.h next to this file (an xcframework build copies it here,
 * docs/swift.md) or the installed package's (pkg-config's -I, from uaii.pc). */
#if __has_include("../../../../capi/uaii.h")
#include "../../../../capi/uaii.h"
#else
#include "uaii.h"
#endif
