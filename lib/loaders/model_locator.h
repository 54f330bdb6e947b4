// Model lookup is public (uaii/model_locator.h).
#pragma once
#include "uaii/model_locator.h"
