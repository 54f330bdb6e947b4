/* The header is self-contained C99: this file is compiled with
 * -std=c99 -Wall -Wextra -pedantic -Werror (and header_check.cpp as C++). */
#include "uaii.h"

#include <stdio.h>
#include <string.h>

int main(void) {
  uaii_session_options so;
  uaii_session_options_init(&so);
  printf("uaii-capi %s (%u), status 301 = %s\n", uaii_capi_version_string(), (unsigned)uaii_capi_version(),
         uaii_status_string(UAII_ERR_UNSUPPORTED));
  /* A C caller may pass any int as a status (in C an enum is an int): the answer is
   * "unknown status", not undefined behaviour inside the library. */
  const char* unknown = uaii_status_string((uaii_status)12345);
  return uaii_capi_version() == UAII_CAPI_VERSION && so.struct_size == sizeof so &&
                 strcmp(unknown, "unknown status") == 0
             ? 0
             : 1;
}
