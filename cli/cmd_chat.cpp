// `uaii chat`: multi-turn chat in the terminal, or one scripted turn.
//
//   uaii chat [--model PATH] [--chat-template FILE] [--system TEXT] [--think | --no-think]
//             [--preset NAME] [--max-tokens N] [--max-context N] [--threads N]
//   uaii chat --messages FILE.json [--tools FILE.json] [--json] [options]
//   uaii chat -p TEXT [--json] [options]              (one user turn)
//
// Each turn renders the whole conversation with the model's chat template and
// generates through one Generator, whose KV cache keeps the conversation: only the
// tokens after the common prefix are evaluated (`cached_tokens` reports the reuse).
// The reply streams through ChatOutputParser into Text / Thinking / ToolCall / Error
// blocks; the syntax (reasoning markers, tool-call markup) is detected from the
// template and the vocabulary (ChatEngine does both). Interactive: line editing and history (libedit, cli/line_reader.h),
// /reset, /exit, Ctrl-C stops the current reply, thinking is shown dimmed.
// --json prints one document (docs/json/chat.schema.json).
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "args.h"
#include "commands.h"
#include "input_files.h"
#include "line_reader.h"
#include "storage_report.h"
#include "uaii/chat.h"
#include "uaii/json_writer.h"
#include "uaii/model_locator.h"
#include "uaii/progress_bar.h"
#include "uaii/process_stats.h"
#include "uaii/str_cat.h"

namespace uaii::cli {
namespace {

constexpr char kUsage[] =
    "usage: uaii chat [--model PATH] [--chat-template FILE] [--system TEXT] [--think | --no-think]\n"
    "                 [--preset laptop|desktop|server|phone|none|off] [--ram-gb N] [--kv-window N]\n"
    "                 [--max-tokens N] [--max-context N] [--threads N] [--device auto|cpu|vulkan[:N]] [--vram-gb N]\n"
    "                 [--grammar FILE.gbnf | --json-schema FILE.json] (the reply follows the grammar)\n"
    "       uaii chat --messages FILE.json [--tools FILE.json] [--json] [options]\n"
    "       uaii chat -p TEXT [--json] [options]\n"
    "interactive commands: /reset (forget the conversation), /exit (or Ctrl-D); Ctrl-C stops a reply\n";

std::atomic<bool> g_interrupted{false};
void OnInterrupt(int) { g_interrupted = true; }

// One message as JSON: {"role": R, "content": C}.
std::string MessageJson(std::string_view role, std::string_view content) {
  JsonWriter w;
  w.BeginObject().Key("role").String(role).Key("content").String(content).EndObject();
  return w.str();
}

// The assistant's reply as a message for the next turn: its text, and its tool
// calls in OpenAI's shape (arguments as an object, which every template reads).
std::string AssistantJson(const std::vector<chat::OutputBlock>& blocks) {
  std::string text;
  for (const auto& b : blocks)
    if (b.kind == chat::BlockKind::kText) text += b.text;
  JsonWriter w;
  w.BeginObject().Key("role").String("assistant").Key("content").String(text);
  bool any_call = false;
  for (const auto& b : blocks) {
    if (b.kind != chat::BlockKind::kToolCall) continue;
    if (!any_call) w.Key("tool_calls").BeginArray();
    any_call = true;
    w.BeginObject().Key("type").String("function");
    if (!b.call.id.empty()) w.Key("id").String(b.call.id);
    w.Key("function").BeginObject().Key("name").String(b.call.name).Key("arguments").Raw(b.call.arguments).EndObject();
    w.EndObject();
  }
  if (any_call) w.EndArray();
  w.EndObject();
  return w.str();
}

std::string JoinArray(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? "," : "") + items[i];
  return out + "]";
}

// One turn through the engine; `on_event` sees every parser event, Ctrl-C cancels.
absl::StatusOr<ChatTurnResult> RunTurn(ChatEngine& engine, const ChatTurnRequest& request,
                                       const std::function<void(const chat::OutputBlock&)>& on_event) {
  return engine.Run(request, [&](const chat::OutputBlock& e) {
    if (on_event) on_event(e);
    return !g_interrupted.load();
  });
}

// Prints events to a terminal: thinking dimmed, tool calls and errors marked.
class Printer {
 public:
  explicit Printer(bool color) : color_(color) {}

  void operator()(const chat::OutputBlock& e) {
    bool switched = started_ && e.kind != last_;
    if (switched && !at_line_start_) Put("\n");
    if (switched && (last_ == chat::BlockKind::kThinking || e.kind == chat::BlockKind::kThinking)) Put("\n");
    started_ = true;
    last_ = e.kind;
    switch (e.kind) {
      case chat::BlockKind::kText: Put(e.text); break;
      case chat::BlockKind::kThinking: Styled("\x1b[2m", e.text); break;
      case chat::BlockKind::kToolCall:
        Styled("\x1b[36m", StrCat("[tool call] ", e.call.name, " ", e.call.arguments,
                                  e.call.id.empty() ? "" : " (id ", e.call.id, e.call.id.empty() ? "" : ")"));
        Put("\n");
        break;
      case chat::BlockKind::kError:
        Styled("\x1b[31m", StrCat("[unreadable tool call: ", e.text, "]"));
        Put("\n");
        break;
    }
    std::fflush(stdout);
  }

  void EndReply() {
    if (started_ && !at_line_start_) Put("\n");
    std::fflush(stdout);
    started_ = false;
    at_line_start_ = true;
  }

 private:
  void Put(std::string_view s) {
    if (s.empty()) return;
    std::fwrite(s.data(), 1, s.size(), stdout);
    at_line_start_ = s.back() == '\n';
  }
  void Styled(const char* style, std::string_view s) {
    if (color_) std::fputs(style, stdout);
    Put(s);
    if (color_) std::fputs("\x1b[0m", stdout);
  }

  bool color_;
  bool started_ = false;
  bool at_line_start_ = true;
  chat::BlockKind last_ = chat::BlockKind::kText;
};

void PrintStats(const ChatTurnResult& t) {
  const GenerationResult& g = t.generation;
  std::fprintf(stderr,
               "[prompt %lld tokens: cached %lld, prefilled %lld | generated %lld tokens (reasoning %lld), stop %s | "
               "prefill %.1f tok/s, decode %.1f tok/s]\n",
               (long long)g.prompt_tokens, (long long)g.cached_tokens, (long long)g.prefilled_tokens,
               (long long)g.tokens.size(), (long long)t.reasoning_tokens,
               std::string(StopReasonName(g.stop)).c_str(), g.prefill_tokens_per_s(), g.decode_tokens_per_s());
  std::fflush(stderr);
}

std::string TurnJson(const ChatTurnResult& t, const chat::ChatSyntax& syntax, const StorageStats& storage) {
  const GenerationResult& g = t.generation;
  std::string text;
  for (const auto& b : t.blocks)
    if (b.kind == chat::BlockKind::kText) text += b.text;
  JsonWriter w(0);
  w.BeginObject();
  w.Key("blocks");
  chat::WriteBlocksJson(w, t.blocks);
  w.Key("text").String(text);
  w.Key("tokens").BeginArray();
  for (TokenId id : g.tokens) w.Int(id);
  w.EndArray();
  w.Key("usage").BeginObject();
  w.Key("prompt_tokens").Int(g.prompt_tokens);
  w.Key("completion_tokens").Int(static_cast<int64_t>(g.tokens.size()));
  w.Key("cached_tokens").Int(g.cached_tokens);
  w.Key("reasoning_tokens").Int(t.reasoning_tokens);
  w.EndObject();
  w.Key("timings").BeginObject();
  w.Key("prefill_tokens_per_s").Double(g.prefill_tokens_per_s());
  w.Key("decode_tokens_per_s").Double(g.decode_tokens_per_s());
  w.EndObject();
  w.Key("memory").BeginObject().Key("peak_rss_bytes").Int(PeakRssBytes());
  WriteStorageMemory(w, storage);
  w.EndObject();
  w.Key("stop_reason").String(StopReasonName(g.stop));
  w.Key("syntax").BeginObject();
  w.Key("reasoning");
  if (syntax.reasoning) {
    w.BeginObject().Key("open").String(syntax.reasoning->open).Key("close").String(syntax.reasoning->close).EndObject();
  } else {
    w.Null();
  }
  w.Key("tool_calls").String(chat::ToolCallSyntaxName(syntax.tool_calls));
  w.Key("starts_in_thinking").Bool(t.started_in_thinking);
  w.Key("can_disable_thinking").Bool(syntax.capabilities.can_disable_thinking);
  w.Key("tools").Bool(syntax.capabilities.tools);
  w.EndObject();
  w.EndObject();
  return w.str();
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

int Interactive(ChatEngine& engine, ChatTurnRequest base, const std::string& system, DecodeTimings* decode) {
  const bool tty = isatty(STDIN_FILENO);
  const bool color = isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR");
  LineReader reader(tty, g_interrupted);
  std::vector<std::string> messages;
  auto fresh = [&] {
    messages.clear();
    if (!system.empty()) messages.push_back(MessageJson("system", system));
  };
  fresh();
  std::fprintf(stderr, "uaii chat: /reset forgets the conversation, /exit quits, Ctrl-C stops a reply\n");
  while (true) {
    auto line = reader.Read(">>> ");
    if (!line) break;
    std::string input = Trim(*line);
    if (input.empty()) continue;
    reader.Remember(input);
    if (input == "/exit" || input == "/quit") break;
    if (input == "/reset") {
      fresh();
      engine.Reset();
      std::printf("(conversation cleared)\n");
      std::fflush(stdout);
      continue;
    }
    if (input[0] == '/') {
      std::printf("commands: /reset, /exit\n");
      std::fflush(stdout);
      continue;
    }
    messages.push_back(MessageJson("user", input));
    ChatTurnRequest req = base;
    req.messages_json = JoinArray(messages);
    Printer printer(color);
    g_interrupted = false;
    auto turn = RunTurn(engine, req, [&](const chat::OutputBlock& e) { printer(e); });
    printer.EndReply();
    if (!turn.ok()) {
      std::fprintf(stderr, "uaii chat: %s%s\n", std::string(turn.status().message()).c_str(),
                   absl::IsOutOfRange(turn.status()) ? " (/reset starts a new conversation)" : "");
      messages.pop_back();
      continue;
    }
    decode->Add(turn->generation.decode_steps, turn->generation.decode_seconds,
                turn->generation.decode_io_wait_seconds);
    if (turn->generation.stop == StopReason::kCancelled) std::printf("[stopped]\n");
    messages.push_back(AssistantJson(turn->blocks));
    PrintStats(*turn);
  }
  return 0;
}

}  // namespace

const char* const kChatUsage = kUsage;

int RunChat(int argc, char** argv) {
  std::vector<std::string> storage;
  for (int i = 0; i < argc; ++i) storage.push_back(std::string(argv[i]) == "-p" ? "--prompt" : argv[i]);
  std::vector<char*> av;
  for (auto& s : storage) av.push_back(s.data());
  auto args = ParseArgs(static_cast<int>(av.size()), av.data(),
                        {.valued = {"--model", "--chat-template", "--system", "--preset", "--ram-gb", "--kv-window", "--moe-top-k", "--moe-prefetch", "--device", "--vram-gb", "--max-tokens", "--max-context",
                                    "--threads", "--messages", "--tools", "--prompt", "--grammar", "--json-schema"},
                         .boolean = {"--think", "--no-think", "--json"}});
  auto usage = [](const std::string& why) {
    std::fprintf(stderr, "uaii chat: %s\n%s", why.c_str(), kUsage);
    return 2;
  };
  if (!args.ok()) return usage(std::string(args.status().message()));
  if (!args->positional.empty()) return usage(StrCat("unexpected argument '", args->positional[0], "'"));
  if (args->has("--think") && args->has("--no-think")) return usage("--think and --no-think exclude each other");
  if (args->has("--messages") && args->has("--prompt")) return usage("--messages and -p exclude each other");
  const bool scripted = args->has("--messages") || args->has("--prompt");
  if (!scripted && (args->has("--json") || args->has("--tools")))
    return usage("--json and --tools need --messages FILE.json or -p TEXT");
  int64_t max_tokens = 512, threads = 0, max_context = 0;
  if (!ParseNumber(args->get("--max-tokens", "512"), &max_tokens) || max_tokens < 0 ||
      !ParseNumber(args->get("--threads", "0"), &threads) || threads < 0 ||
      !ParseNumber(args->get("--max-context", "0"), &max_context) || max_context < 0)
    return usage("--max-tokens, --threads and --max-context take a non-negative integer");
  SessionOptions so;
  if (auto st = MemoryOptionsFromArgs(*args, &so); !st.ok()) return usage(std::string(st.message()));

  auto fail = [](const absl::Status& st) {
    std::fprintf(stderr, "uaii chat: %s\n", std::string(st.message()).c_str());
    return 1;
  };
  ChatTurnRequest base;
  base.max_tokens = max_tokens;
  auto grammar = GrammarFromArgs(*args);
  if (!grammar.ok()) return fail(grammar.status());
  base.grammar = *std::move(grammar);
  if (args->has("--think")) base.think = true;
  if (args->has("--no-think")) base.think = false;
  std::vector<std::string> scripted_messages;
  if (args->has("--messages")) {
    auto text = ReadFile(args->get("--messages"), "messages file");
    if (!text.ok()) return fail(text.status());
    if (auto st = CheckJsonArray(*text, StrCat("messages file ", args->get("--messages")), /*non_empty=*/true);
        !st.ok())
      return fail(st);
    base.messages_json = *std::move(text);
  } else if (args->has("--prompt")) {
    if (args->has("--system")) scripted_messages.push_back(MessageJson("system", args->get("--system")));
    scripted_messages.push_back(MessageJson("user", args->get("--prompt")));
    base.messages_json = JoinArray(scripted_messages);
  }
  if (args->has("--tools")) {
    auto text = ReadFile(args->get("--tools"), "tools file");
    if (!text.ok()) return fail(text.status());
    if (auto st = CheckJsonArray(*text, StrCat("tools file ", args->get("--tools"))); !st.ok()) return fail(st);
    base.tools_json = *std::move(text);
  }

  auto path = ResolveModelPath(args->get("--model"));
  if (!path.ok()) return fail(path.status());
  auto model = Model::Load(*path);
  if (!model.ok()) return fail(model.status());
  so.threads = static_cast<int>(threads);
  so.max_context = max_context;  // 0: the default, or the model's maximum when smaller
  ProgressBar load_bar("loading " + std::filesystem::path(*path).filename().string(), !(args->has("--json")));
  so.on_load_progress = [&](uint64_t done, uint64_t total) { load_bar.Update(done, total); };
  auto gen = Generator::Create(*model, so);
  load_bar.Done("");
  so.on_load_progress = nullptr;
  if (!gen.ok()) return fail(gen.status());
  // Said once, where the user asked for a device: what "auto" fell back from.
  if (args->has("--device") && !(*gen)->session().device_note().empty())
    std::fprintf(stderr, "uaii chat: device: %s\n", (*gen)->session().device_note().c_str());
  const std::string template_path = args->get("--chat-template");
  auto engine = ChatEngine::Create(std::shared_ptr<Generator>(*std::move(gen)), template_path);
  if (!engine.ok()) return fail(engine.status());
  const chat::ChatSyntax& syntax = (*engine)->syntax();
  if (!(*engine)->template_note().empty()) std::fprintf(stderr, "uaii chat: %s\n", (*engine)->template_note().c_str());
  if (base.think && !syntax.capabilities.can_disable_thinking)
    std::fprintf(stderr, "uaii chat: note: the chat template does not read enable_thinking; --%s changes nothing\n",
                 *base.think ? "think" : "no-think");

  struct sigaction sa {};
  sa.sa_handler = OnInterrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: Ctrl-C at the prompt interrupts the read
  sigaction(SIGINT, &sa, nullptr);

  // After the session, its decode steps teach the calibration, as a generate run's do
  // (docs/storage.md, "Observed figures"); never fails the command.
  DecodeTimings decode;
  auto learn = [&] {
    const StorageStats st = (*engine)->generator().session().storage_stats();
    if (const std::string note = RecordRunObservation(*path, **model, so, st, decode, (*engine)->generator().session().device()); !note.empty())
      std::fprintf(stderr, "uaii chat: %s\n", note.c_str());
  };
  if (!scripted) {
    const int rc = Interactive(**engine, base, args->get("--system"), &decode);
    learn();
    return rc;
  }

  const bool json = args->has("--json");
  Printer printer(!json && isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR"));
  auto turn = RunTurn(**engine, base, [&](const chat::OutputBlock& e) {
    if (!json) printer(e);
  });
  if (!turn.ok()) return fail(turn.status());
  if (json) {
    std::printf("%s\n", TurnJson(*turn, syntax, (*engine)->generator().session().storage_stats()).c_str());
  } else {
    printer.EndReply();
    PrintStats(*turn);
  }
  decode.Add(turn->generation.decode_steps, turn->generation.decode_seconds, turn->generation.decode_io_wait_seconds);
  learn();
  return 0;
}

}  // namespace uaii::cli
