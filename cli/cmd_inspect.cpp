// `uaii inspect [--model] PATH [--json]`: what a model file holds, without loading weights.
#include <cstdio>

#include "args.h"
#include "commands.h"
#include "uaii/inspect.h"
#include "uaii/model_locator.h"

namespace uaii::cli {

const char* const kInspectUsage = "usage: uaii inspect [--model] PATH [--json]\n";

int RunInspect(int argc, char** argv) {
  auto args = ParseArgs(argc, argv, {.valued = {"--model"}, .boolean = {"--json"}});
  if (!args.ok() || args->positional.size() > 1) {
    std::fprintf(stderr, "uaii inspect: %s\n%s",
                 args.ok() ? "too many arguments" : std::string(args.status().message()).c_str(), kInspectUsage);
    return 2;
  }
  std::string flag = args->get("--model", args->positional.empty() ? "" : args->positional[0]);
  auto path = ResolveModelPath(flag);
  auto report = !path.ok() ? absl::StatusOr<std::string>(path.status())
                : args->has("--json") ? InspectJson(*path)
                                      : InspectText(*path);
  if (!report.ok()) {
    std::fprintf(stderr, "uaii inspect: %s\n", std::string(report.status().message()).c_str());
    return 1;
  }
  std::fputs(report->c_str(), stdout);
  if (args->has("--json")) std::fputs("\n", stdout);
  return 0;
}

}  // namespace uaii::cli
