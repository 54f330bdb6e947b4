// Python str semantics on UTF-8 text: strip / split / replace / case mapping / find.
// Case mapping covers ASCII and Latin-1 letters (chat templates only case ASCII
// role names and keywords); everything else is code-point aware.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace uaii::jinja {

// str.strip/lstrip/rstrip: `chars` unset strips Python whitespace.
std::string PyStrip(const std::string& s, const std::optional<std::string>& chars, bool left, bool right);
std::vector<std::string> PySplitWhitespace(const std::string& s, int64_t maxsplit);
std::vector<std::string> PySplit(const std::string& s, const std::string& sep, int64_t maxsplit);
std::vector<std::string> PyRSplit(const std::string& s, const std::string& sep, int64_t maxsplit);
std::string PyReplace(const std::string& s, const std::string& old, const std::string& repl, int64_t count);
std::string PyUpper(const std::string& s);
std::string PyLower(const std::string& s);
std::string PyTitle(const std::string& s);       // str.title
std::string PyCapitalize(const std::string& s);  // str.capitalize
bool PyIsUpper(const std::string& s);
bool PyIsLower(const std::string& s);
int64_t PyFind(const std::string& s, const std::string& sub, bool reverse);  // code-point index or -1
int64_t PyCount(const std::string& s, const std::string& sub);

}  // namespace uaii::jinja
