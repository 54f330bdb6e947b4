// JsonWriter is public (uaii/json_writer.h): every JSON document the library, the CLI
// and the C ABI write goes through it.
#pragma once
#include "uaii/json_writer.h"
