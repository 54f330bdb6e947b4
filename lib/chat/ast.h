// The parsed template: expression and statement nodes. One generic node shape per
// family keeps the parser and the evaluator short; `kind` says which fields are used.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chat/value.h"

namespace uaii::jinja {

enum class ExprKind {
  kLiteral,    // value
  kName,       // name
  kList,       // kids
  kTuple,      // kids
  kDict,       // kids: k0, v0, k1, v1, ...
  kAttr,       // kids[0] . name
  kSubscript,  // kids[0] [ kids[1] ]
  kSlice,      // kids: start, stop, step (null when omitted)
  kCall,       // kids[0] ( kids[1..] , kwargs )
  kFilter,     // name, kids[0] = operand (null inside a filter block), kids[1..] args, kwargs
  kTest,       // name, kids[0] operand, kids[1..] args; negated
  kNeg,        // - kids[0]
  kPos,        // + kids[0]
  kNot,        // not kids[0]
  kBinary,     // op in {+ - * / // % ** ~ and or}: kids[0] op kids[1]
  kCompare,    // kids[0] ops[0] kids[1] ops[1] kids[2] ... (chained, like Python)
  kCondExpr,   // kids[1] if kids[0] else kids[2] (kids[2] null: no else)
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  ExprKind kind;
  int line = 0;
  Value value;                 // kLiteral
  std::string name;            // kName, kAttr, kFilter, kTest; kBinary: operator
  std::vector<ExprPtr> kids;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;  // kCall, kFilter, kTest
  std::vector<std::string> ops;  // kCompare: "==", "!=", "<", "<=", ">", ">=", "in", "notin"
  bool negated = false;          // kTest
};

enum class StmtKind {
  kData,        // text
  kPrint,       // expr
  kIf,          // conds[i] -> bodies[i]; else_body
  kFor,         // target, expr (iterable), cond (loop filter, may be null), body, else_body, recursive
  kSet,         // target = expr
  kSetBlock,    // target = rendered body piped through filters (expr chain, may be null)
  kMacro,       // name, params (names), defaults (parallel, null = required), body
  kCallBlock,   // expr = the call; params/defaults = caller's; body = caller body
  kFilterBlock, // expr = filter chain applied to the rendered body
  kWith,        // targets/values assigned in a new scope; body
  kBreak,
  kContinue,
  kGeneration,  // HF's {% generation %}: renders its body unchanged
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct Stmt {
  StmtKind kind;
  int line = 0;
  std::string text;      // kData; kMacro: name
  ExprPtr expr;          // kPrint, kFor (iterable), kSet (value), kCallBlock, kFilterBlock, kSetBlock filters
  ExprPtr target;        // kFor, kSet, kSetBlock: kName / kTuple of kName / kAttr (namespace)
  ExprPtr cond;          // kFor loop filter
  std::vector<ExprPtr> conds;
  std::vector<Body> bodies;
  Body body;
  Body else_body;
  bool recursive = false;
  std::vector<std::string> params;   // kMacro, kCallBlock
  std::vector<ExprPtr> defaults;     // kMacro, kCallBlock; kWith: values (params are the names)
};

}  // namespace uaii::jinja
