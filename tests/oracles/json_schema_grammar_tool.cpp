// llama.cpp's own JSON-Schema-to-GBNF converter (common/json-schema-to-grammar.cpp and
// common/json-schema.cpp of the llama-cpp-python 0.3.36 sdist's vendor/llama.cpp), wrapped
// as a filter for tests/oracles/json_schema_grammar_oracle.py, which compiles it against
// those sources: one schema per stdin line (JSON text), one JSON line per schema on stdout,
// {"gbnf": GRAMMAR} or {"error": MESSAGE} (what json_schema_to_grammar threw).
#include "json-schema-to-grammar.h"
#include "json.h"
#include <iostream>
#include <sstream>
#include <string>
#include <vector>
// common.cpp's string helpers, verbatim (linking common.cpp would pull in the whole of libcommon).
std::string string_join(const std::vector<std::string> & values, const std::string & separator) {
    std::ostringstream result;
    for (size_t i = 0; i < values.size(); ++i) { if (i > 0) { result << separator; } result << values[i]; }
    return result.str();
}
std::vector<std::string> string_split(const std::string & str, const std::string & delimiter) {
    std::vector<std::string> parts; size_t start = 0; size_t end = str.find(delimiter);
    while (end != std::string::npos) { parts.push_back(str.substr(start, end - start)); start = end + delimiter.length(); end = str.find(delimiter, start); }
    parts.push_back(str.substr(start)); return parts;
}
std::string string_repeat(const std::string & str, size_t n) {
    if (n == 0) { return ""; } std::string result; result.reserve(str.length() * n);
    for (size_t i = 0; i < n; ++i) { result += str; } return result;
}
int main() {
    std::string line;
    while (std::getline(std::cin, line)) {
        std::string key, val;
        try { val = json_schema_to_grammar(common_json::parse(line), true); key = "gbnf"; }
        catch (const std::exception & e) { val = e.what(); key = "error"; }
        std::cout << "{" << common_json::make(key).dump() << ": " << common_json::make(val).dump() << "}" << std::endl;
    }
}
