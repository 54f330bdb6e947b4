// StrCat is public (uaii/str_cat.h); the library's modules include it through this name.
#pragma once
#include "uaii/str_cat.h"
