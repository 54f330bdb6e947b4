// A compiled Jinja template with the semantics of Python jinja2 in Hugging Face's
// apply_chat_template environment (see docs/chat_templates.md for the coverage).
//
//   auto t = jinja::Template::Parse(source);          // syntax errors -> status
//   auto text = t->Render(context_dict, options);     // runtime errors -> status
//
// Errors carry jinja2's exception class and message, e.g.
// "TemplateError: Conversation roles must alternate ... (template line 12)" for a
// template's raise_exception(), "UndefinedError: 'x' is undefined", or uaii's own
// "LimitError: ..." when a runaway template hits a RenderLimits bound.
#pragma once
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "chat/interpreter.h"
#include "chat/value.h"

namespace uaii::jinja {

class Template {
 public:
  static absl::StatusOr<Template> Parse(const std::string& source);
  // `context` is a dict of template variables (Value::MakeDict()).
  absl::StatusOr<std::string> Render(const Value& context, const RenderOptions& options = {}) const;

 private:
  std::shared_ptr<const Body> body_;
};

}  // namespace uaii::jinja
