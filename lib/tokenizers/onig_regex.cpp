#include "tokenizers/onig_regex.h"

#include <oniguruma.h>

#include <mutex>

#include "tokenizers/str_cat.h"
#include "tokenizers/unicode.h"

namespace uaii::tok {
namespace {

void InitOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    OnigEncoding encs[] = {ONIG_ENCODING_UTF8};
    onig_initialize(encs, 1);
  });
}

std::string OnigMessage(int code, OnigErrorInfo* info = nullptr) {
  OnigUChar buf[ONIG_MAX_ERROR_MESSAGE_LEN];
  const int n = info ? onig_error_code_to_str(buf, code, info) : onig_error_code_to_str(buf, code);
  return std::string(reinterpret_cast<const char*>(buf), n > 0 ? n : 0);
}

// A region and match parameters for one FindMatches call.
struct SearchState {
  OnigRegion* region = onig_region_new();
  OnigMatchParam* param = onig_new_match_param();
  ~SearchState() {
    onig_region_free(region, 1);
    onig_free_match_param(param);
  }
};

}  // namespace

struct OnigRegex::Compiled {
  regex_t* re = nullptr;
  ~Compiled() {
    if (re) onig_free(re);
  }
};

OnigRegex::~OnigRegex() = default;

absl::StatusOr<std::shared_ptr<const OnigRegex>> OnigRegex::Compile(std::string_view pattern,
                                                                 RegexLimits limits) {
  if (absl::Status st = ValidateUtf8(pattern); !st.ok())
    return absl::InvalidArgumentError(StrCat("regex pattern is not valid UTF-8: ", std::string(st.message())));
  InitOnce();
  std::shared_ptr<OnigRegex> out(new OnigRegex);
  out->re_ = std::make_unique<Compiled>();
  out->pattern_ = std::string(pattern);
  out->limits_ = limits;
  OnigErrorInfo info;
  const auto* p = reinterpret_cast<const OnigUChar*>(out->pattern_.data());
  // ONIG_SYNTAX_DEFAULT and ONIG_OPTION_NONE: what the onig crate's Regex::new uses.
  const int rc = onig_new(&out->re_->re, p, p + out->pattern_.size(), ONIG_OPTION_NONE,
                          ONIG_ENCODING_UTF8, ONIG_SYNTAX_DEFAULT, &info);
  if (rc != ONIG_NORMAL)
    return absl::InvalidArgumentError(
        StrCat("invalid regex \"", pattern, "\": ", OnigMessage(rc, &info)));
  return std::shared_ptr<const OnigRegex>(std::move(out));
}

std::string EscapeRegexLiteral(std::string_view text) {
  std::string out;
  out.reserve(text.size() * 2);
  for (char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if (b >= 0x21 && b < 0x7F && !((b | 32) >= 'a' && (b | 32) <= 'z') && !(b >= '0' && b <= '9'))
      out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

absl::StatusOr<std::shared_ptr<const OnigRegex>> OnigRegex::Literal(std::string_view text) {
  return Compile(EscapeRegexLiteral(text));
}

absl::Status OnigRegex::FindMatches(std::string_view text, std::vector<PatternMatch>& out) const {
  out.clear();
  if (text.empty()) {
    out.push_back({0, 0, false});
    return absl::OkStatus();
  }
  if (text.size() > UINT32_MAX) return absl::InvalidArgumentError("text too long for a regex split");
  if (absl::Status st = ValidateUtf8(text); !st.ok()) return st;
  SearchState s;
  onig_set_retry_limit_in_match_of_match_param(s.param, limits_.retry_in_match);
  onig_set_retry_limit_in_search_of_match_param(s.param, limits_.retry_in_search);
  onig_set_match_stack_limit_size_of_match_param(s.param, limits_.match_stack);
  const auto* beg = reinterpret_cast<const OnigUChar*>(text.data());
  const auto* end = beg + text.size();
  // The onig crate's find_iter: search from the previous match's end; an empty
  // match at that very end is skipped by one code point.
  size_t from = 0, prev_end = 0;
  bool have_prev = false;
  uint32_t gap = 0;
  while (from <= text.size()) {
    onig_region_clear(s.region);
    const int r = onig_search_with_param(re_->re, beg, end, beg + from, end, s.region,
                                         ONIG_OPTION_NONE, s.param);
    if (r == ONIG_MISMATCH) break;
    if (r < 0)
      return absl::ResourceExhaustedError(StrCat(
          "regex \"", pattern_, "\" failed on a piece of ", text.size(), " bytes: ", OnigMessage(r),
          " (a pattern with catastrophic backtracking; uaii bounds each search)"));
    const auto ms = static_cast<size_t>(s.region->beg[0]);
    const auto me = static_cast<size_t>(s.region->end[0]);
    if (ms == me && have_prev && me == prev_end) {
      from += from < text.size() ? Utf8Len(static_cast<uint8_t>(text[from])) : 1;
      continue;
    }
    from = prev_end = me;
    have_prev = true;
    if (ms != gap) out.push_back({gap, static_cast<uint32_t>(ms), false});
    out.push_back({static_cast<uint32_t>(ms), static_cast<uint32_t>(me), true});
    gap = static_cast<uint32_t>(me);
  }
  if (gap != text.size()) out.push_back({gap, static_cast<uint32_t>(text.size()), false});
  return absl::OkStatus();
}

}  // namespace uaii::tok
