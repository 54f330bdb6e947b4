// Tokens -> statement tree, following jinja2's grammar and operator precedence
// (loosest first): inline if, or, and, not, comparisons / in / not in, + -, ~,
// * / // %, **, unary - +, then postfix (.attr, [subscript/slice], call), filters
// (|name) and tests (is [not] name).
#pragma once
#include <string>

#include "chat/ast.h"

namespace uaii::jinja {

// Throws JinjaError (TemplateSyntaxError) with jinja2's wording where practical.
Body ParseTemplate(const std::string& source);

}  // namespace uaii::jinja
