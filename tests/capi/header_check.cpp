// The C header compiles as C++ too (-Wall -Wextra -Werror).
#include "uaii.h"

int main() { return uaii_capi_version() == UAII_CAPI_VERSION ? 0 : 1; }
