// Tree-walking evaluator for parsed templates, with jinja2's runtime semantics in the
// Hugging Face environment (ImmutableSandboxedEnvironment: no `_` attributes, no
// mutation of lists/dicts through their methods, range() capped at 100000).
// Internal to lib/chat: errors are thrown as JinjaError and become statuses in
// template.cpp.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "chat/ast.h"
#include "chat/value.h"

namespace uaii::jinja {

// Runaway-template guards. Every limit stops rendering with a LimitError that
// names the limit and its value.
struct RenderLimits {
  int max_call_depth = 200;                    // nested macro / caller / recursive-loop calls
  uint64_t max_loop_iterations = 10'000'000;   // all loop iterations of one render, together
  size_t max_output_bytes = 64u << 20;         // rendered text, including macro and block captures
};

struct RenderOptions {
  RenderLimits limits;
  // jinja2's ImmutableSandboxedEnvironment refuses list.append, dict.update, ... as
  // HF does; false gives a plain SandboxedEnvironment where they mutate.
  bool immutable = true;
  // strftime_now() renders this instant (seconds since the epoch, UTC); < 0 = now.
  int64_t fixed_time = -1;
};

struct CallArgs {
  std::vector<Value> args;
  std::vector<std::pair<std::string, Value>> kwargs;
  // Positional argument `i`, else keyword `name`, else nullptr.
  const Value* Get(size_t i, std::string_view name) const;
  Value GetOr(size_t i, std::string_view name, Value fallback) const;
};

struct Scope {
  std::unordered_map<std::string, Value> vars;
  std::shared_ptr<Scope> parent;
  const Value* Find(const std::string& name) const;
};
using ScopePtr = std::shared_ptr<Scope>;

class Interpreter {
 public:
  explicit Interpreter(const RenderOptions& options);
  // Renders `body` with `context` (a dict of variables) over the built-in globals.
  std::string Render(const Body& body, const Value& context);

  const RenderOptions& options() const { return opts_; }

  // Evaluation entry points used by the filters, tests and methods.
  Value Eval(const Expr& e, const ScopePtr& scope);
  Value Call(const Value& callee, CallArgs& args);
  Value GetAttr(const Value& obj, const std::string& name);  // obj.name
  Value GetItem(const Value& obj, const Value& key);         // obj[key]
  Value ApplyFilter(const std::string& name, const Value& input, CallArgs& args);
  bool ApplyTest(const std::string& name, const Value& input, CallArgs& args);
  // Iteration as jinja2's `for` sees it: list items, dict keys, string characters.
  std::vector<Value> Iterate(const Value& v);
  void CountIterations(uint64_t n);
  void CountOutput(size_t bytes);

 private:
  enum class Flow { kNormal, kBreak, kContinue };
  Flow Exec(const Body& body, const ScopePtr& scope, std::string& out);
  Flow ExecStmt(const Stmt& s, const ScopePtr& scope, std::string& out);
  void ExecFor(const Stmt& s, const ScopePtr& scope, std::string& out);
  void RunLoop(const Stmt& s, const ScopePtr& scope, std::string& out, const Value& iterable, int depth);
  void Assign(const Expr& target, const Value& v, const ScopePtr& scope);
  Value MakeMacro(const Stmt& s, const ScopePtr& scope, const Value* caller);
  Value EvalBinary(const Expr& e, const ScopePtr& scope);
  Value EvalCompare(const Expr& e, const ScopePtr& scope);
  Value EvalFilterExpr(const Expr& e, const ScopePtr& scope, const Value* block_input);
  CallArgs EvalArgs(const Expr& e, const ScopePtr& scope, size_t first);
  ScopePtr MakeGlobals();

  RenderOptions opts_;
  uint64_t iterations_ = 0;
  size_t output_bytes_ = 0;
  int depth_ = 0;
  // Scopes that macros / recursive loops close over (held weakly by them).
  std::vector<ScopePtr> keep_alive_;
};

// [[noreturn]] helpers shared by the builtins.
[[noreturn]] void RaiseType(const std::string& message);
[[noreturn]] void RaiseUndefined(const Value& undefined);

// Builtins (builtins_*.cpp).
bool HasFilter(const std::string& name);
Value CallFilter(Interpreter& in, const std::string& name, const Value& input, CallArgs& args);
bool HasTest(const std::string& name);
bool CallTest(Interpreter& in, const std::string& name, const Value& input, CallArgs& args);
// A Python method of a str / list / dict bound to `self`, or Undefined when the type
// has no such method (or a SecurityError-Undefined for mutators in the immutable sandbox).
Value BindMethod(Interpreter& in, const Value& self, const std::string& name);
// Python binary operators on values (+ - * / // % **), TypeError as Python words it.
Value BinaryOp(const std::string& op, const Value& a, const Value& b);
bool Contains(const Value& container, const Value& item);  // Python `in`
// Python str % args (jinja2 sandbox formatting), and str.format.
std::string PercentFormat(const std::string& fmt, const Value& args);
std::string PyFormat(const std::string& fmt, const CallArgs& args);
// Python slicing on lists, tuples and strings.
Value Slice(const Value& obj, const Value& start, const Value& stop, const Value& step);

}  // namespace uaii::jinja
