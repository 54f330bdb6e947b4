// `uaii`: the command line tool. Subcommands live in one table; each in its own file.
#include <cstdio>
#include <cstring>
#include <string_view>

#include "commands.h"

namespace {

struct Command {
  std::string_view name;
  int (*run)(int argc, char** argv);
  std::string_view summary;
  const char* const* usage;
};

constexpr Command kCommands[] = {
    {"inspect", uaii::cli::RunInspect, "describe a model file: format, hyper-parameters, tensors, tokenizer",
     &uaii::cli::kInspectUsage},
    {"template", uaii::cli::RunTemplate, "render the chat template for messages (prompt text or token ids)",
     &uaii::cli::kTemplateUsage},
    {"generate", uaii::cli::RunGenerate, "greedy text continuation of a prompt", &uaii::cli::kGenerateUsage},
    {"tokenize", uaii::cli::RunTokenize, "encode text to token ids or decode ids to text", &uaii::cli::kTokenizeUsage},
    {"chat", uaii::cli::RunChat, "chat with a model: interactive turns, or one scripted turn as JSON blocks",
     &uaii::cli::kChatUsage},
    {"pull", uaii::cli::RunPull, "download a Hugging Face model (or --dry-run: will it fit?)", &uaii::cli::kPullUsage},
    {"serve", uaii::cli::RunServe, "an OpenAI-compatible HTTP server with a dashboard (docs/serving.md)",
     &uaii::cli::kServeUsage},
    {"devices", uaii::cli::RunDevices, "list the devices --device can name (CPU, Vulkan GPUs) and what auto picks",
     &uaii::cli::kDevicesUsage},
    {"compile", uaii::cli::RunCompile, "write a model's graph as .uaii / .uaii.json; --plan prints the plan",
     &uaii::cli::kCompileUsage},
};

int Usage(FILE* out) {
  std::fprintf(out, "usage: uaii COMMAND [options]\n\ncommands:\n");
  for (const auto& c : kCommands)
    std::fprintf(out, "  %-10.*s %.*s\n", (int)c.name.size(), c.name.data(), (int)c.summary.size(),
                 c.summary.data());
  return out == stdout ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage(stderr);
  std::string_view name = argv[1];
  if (name == "-h" || name == "--help" || name == "help") return Usage(stdout);
  for (const auto& c : kCommands) {
    if (c.name != name) continue;
    // `--help` / `-h` anywhere before a `--`: the command's usage, exit 0.
    for (int i = 2; i < argc && std::strcmp(argv[i], "--") != 0; ++i)
      if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
        std::fputs(*c.usage, stdout);
        return 0;
      }
    return c.run(argc - 2, argv + 2);
  }
  std::fprintf(stderr, "uaii: unknown command '%s'\n", argv[1]);
  return Usage(stderr);
}
