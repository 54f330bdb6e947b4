// The error a template raises while parsing or rendering. It stays inside lib/chat:
// Template::Parse / Render turn it into an absl::Status (the one place exceptions
// become statuses in this module), so callers only ever see statuses.
#pragma once
#include <stdexcept>
#include <string>

namespace uaii::jinja {

struct JinjaError : std::runtime_error {
  // `type` is the Python exception class jinja2 would raise (TemplateSyntaxError,
  // UndefinedError, TypeError, SecurityError, TemplateError, ...) or LimitError for
  // uaii's own runaway-template limits; `message` is its text.
  JinjaError(std::string type, std::string message, int line = 0)
      : std::runtime_error(message), type(std::move(type)), message(std::move(message)), line(line) {}
  std::string type;
  std::string message;
  int line;
};

}  // namespace uaii::jinja
