// JSON quirks of Hugging Face files. tokenizer_config.json often holds
// "model_max_length": 1000000000000000019884624838656 (int(1e30) written by Python),
// an integer beyond 64 bits that simdjson 3.0's DOM parser rejects. Such literals are
// rewritten as floats ("...656.0") before parsing; strings are left untouched.
#pragma once
#include <string>
#include <string_view>

namespace uaii::hf {

// `json` with every integer literal of more than 19 digits (outside strings) given a
// ".0" suffix. Returns the input unchanged when there is none.
std::string WidenBigIntegers(std::string_view json);

}  // namespace uaii::hf
