// `uaii template [--model PATH] --messages FILE.json [--tools FILE.json] [--think | --no-think]
//                [--no-generation-prompt] [--ids]`
// Renders the model's chat template for a conversation, as Hugging Face's
// apply_chat_template does, and prints the prompt (or its token ids) without
// running the model.
#include <cstdio>
#include <fstream>
#include <sstream>

#include "args.h"
#include "commands.h"
#include "input_files.h"
#include "uaii/chat.h"
#include "uaii/model_locator.h"
#include "uaii/tokenizer.h"

namespace uaii::cli {
namespace {

constexpr const char* kUsage =
    "usage: uaii template [--model PATH] --messages FILE.json [--tools FILE.json]\n"
    "                     [--think | --no-think] [--no-generation-prompt] [--ids]\n"
    "  --messages  JSON list of OpenAI-style messages (or an object with \"messages\")\n"
    "  --tools     JSON list of tool declarations (or an object with \"tools\")\n"
    "  --think / --no-think  set enable_thinking (and thinking) to true / false\n"
    "  --no-generation-prompt  add_generation_prompt = false (default true)\n"
    "  --ids       print the prompt's token ids instead of its text\n";

int Fail(const std::string& msg) {
  std::fprintf(stderr, "uaii template: %s\n", msg.c_str());
  return 1;
}

}  // namespace

const char* const kTemplateUsage = kUsage;

int RunTemplate(int argc, char** argv) {
  auto args = ParseArgs(argc, argv,
                        {.valued = {"--model", "--messages", "--tools"},
                         .boolean = {"--think", "--no-think", "--no-generation-prompt", "--ids"}});
  if (!args.ok()) {
    std::fprintf(stderr, "uaii template: %s\n%s", std::string(args.status().message()).c_str(), kUsage);
    return 2;
  }
  if (!args->has("--messages") || !args->positional.empty() || (args->has("--think") && args->has("--no-think"))) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  auto path = ResolveModelPath(args->get("--model"));
  if (!path.ok()) return Fail(std::string(path.status().message()));

  ChatRenderRequest req;
  auto messages = ReadFile(args->get("--messages"), "messages file");
  if (!messages.ok()) return Fail(std::string(messages.status().message()));
  req.messages_json = *std::move(messages);
  req.messages_origin = "messages file " + args->get("--messages");
  if (args->has("--tools")) {
    auto tools = ReadFile(args->get("--tools"), "tools file");
    if (!tools.ok()) return Fail(std::string(tools.status().message()));
    req.tools_json = *std::move(tools);
    req.tools_origin = "tools file " + args->get("--tools");
  }
  if (args->has("--think")) req.enable_thinking = true;
  if (args->has("--no-think")) req.enable_thinking = false;
  req.add_generation_prompt = !args->has("--no-generation-prompt");
  auto prompt = RenderChatTemplate(*path, req);
  if (!prompt.ok()) return Fail(std::string(prompt.status().message()));

  if (!args->has("--ids")) {
    std::fwrite(prompt->data(), 1, prompt->size(), stdout);
    return 0;
  }
  auto tok = Tokenizer::Load(*path);
  if (!tok.ok()) return Fail(*path + ": cannot load the tokenizer for --ids: " + std::string(tok.status().message()));
  // Special tokens written by the template are parsed as such; BOS is added as the
  // tokenizer's configuration says, and never doubled when the template wrote it.
  auto ids = (*tok)->Encode(*prompt, {.parse_special = true, .add_special = true});
  if (!ids.ok()) return Fail(std::string(ids.status().message()));
  for (size_t i = 0; i < ids->size(); ++i) std::printf(i ? " %d" : "%d", (*ids)[i]);
  std::printf("\n");
  return 0;
}

}  // namespace uaii::cli
