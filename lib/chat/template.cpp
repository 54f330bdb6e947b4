#include "chat/template.h"

#include "absl/strings/str_cat.h"
#include "chat/error.h"
#include "chat/parser.h"

namespace uaii::jinja {
namespace {

absl::Status ToStatus(const JinjaError& e) {
  std::string msg = absl::StrCat(e.type, ": ", e.message);
  if (e.line > 0) absl::StrAppend(&msg, " (template line ", e.line, ")");
  if (e.type == "TemplateSyntaxError" || e.type == "TemplateAssertionError") return absl::InvalidArgumentError(msg);
  if (e.type == "LimitError") return absl::ResourceExhaustedError(msg);
  return absl::FailedPreconditionError(msg);
}

}  // namespace

absl::StatusOr<Template> Template::Parse(const std::string& source) {
  try {
    Template t;
    t.body_ = std::make_shared<const Body>(ParseTemplate(source));
    return t;
  } catch (const JinjaError& e) {
    return ToStatus(e);
  }
}

absl::StatusOr<std::string> Template::Render(const Value& context, const RenderOptions& options) const {
  try {
    Interpreter in(options);
    return in.Render(*body_, context);
  } catch (const JinjaError& e) {
    return ToStatus(e);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("LimitError: out of memory while rendering the template");
  }
}

}  // namespace uaii::jinja
