// The sampler chain's parameters are public (uaii/sampling.h); the library's
// modules include them through this name.
#pragma once
#include "uaii/sampling.h"
