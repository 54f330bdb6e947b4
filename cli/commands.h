// Every `uaii` subcommand: argv holds the arguments after the subcommand's name.
// Returns the process exit code (0 ok, 1 runtime error, 2 usage error).
#pragma once

namespace uaii::cli {

int RunInspect(int argc, char** argv);
int RunTemplate(int argc, char** argv);
int RunGenerate(int argc, char** argv);
int RunTokenize(int argc, char** argv);
int RunPull(int argc, char** argv);
int RunChat(int argc, char** argv);
int RunCompile(int argc, char** argv);
int RunServe(int argc, char** argv);
int RunDevices(int argc, char** argv);

// Each subcommand's usage (in its file): printed with a usage error, and on stdout with
// exit code 0 for `uaii COMMAND --help` (main.cpp).
extern const char* const kInspectUsage;
extern const char* const kTemplateUsage;
extern const char* const kGenerateUsage;
extern const char* const kTokenizeUsage;
extern const char* const kPullUsage;
extern const char* const kChatUsage;
extern const char* const kCompileUsage;
extern const char* const kServeUsage;
extern const char* const kDevicesUsage;

}  // namespace uaii::cli
