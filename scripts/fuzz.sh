#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, UAII_BUILD_FUZZERS) in their own build directory
# with Debian's clang 14 and runs each for a while, growing a corpus that persists across
# runs. docs/reliability.md lists the targets and the figures.
#   bash scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default 600 s, every target)
#   bash scripts/fuzz.sh --merge-seeds [TARGET...]            (after runs: see below)
# Environment: UAII_FUZZ_BUILD_DIR (default build-fuzz); UAII_FUZZ_CACHE (default
# ~/.cache/uaii/fuzz: <target>/ is the grown corpus, <target>.log the last run's log,
# stats.tsv one line per run: UTC time, target, seconds it ran, executions, corpus files,
# outcome); UAII_FUZZ_JOBS (targets run at once, default nproc); UAII_FUZZ_FIXTURES
# (the main build's fixtures, default build/fixtures: made when absent); UAII_FUZZ_NO_BUILD=1
# runs the targets already built (while another job builds in the same directory).
# A crash, leak, timeout (> 20 s on one input) or out-of-memory (> 2.5 GB) stops that
# target and leaves its input in $UAII_FUZZ_CACHE/artifacts/; the script exits 1
# naming them. Each becomes a regression test in the normal suite (docs/reliability.md).
# --merge-seeds: adds the cached inputs under 16 KB that bring new coverage to the
# committed seed corpus (fuzz/corpus/<target>/), for a commit.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${UAII_FUZZ_BUILD_DIR:-build-fuzz}
CACHE=${UAII_FUZZ_CACHE:-$HOME/.cache/uaii/fuzz}
JOBS=${UAII_FUZZ_JOBS:-$(nproc)}
MERGE=0
SECONDS_PER=600
if [ "${1:-}" = "--merge-seeds" ]; then MERGE=1; shift
elif [[ "${1:-}" =~ ^[0-9]+$ ]]; then SECONDS_PER=$1; shift
fi
ALL=()
for f in fuzz/fuzz_*.cpp; do t=$(basename "$f" .cpp); [ "$t" = fuzz_util ] || ALL+=("${t#fuzz_}"); done
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=("${ALL[@]}")

source scripts/common.sh
if [ "${UAII_FUZZ_NO_BUILD:-0}" != 1 ]; then
  configure_instrumented_build "$BUILD" || exit 1
  cmake --build "$BUILD" -j"$(nproc)" --target "${TARGETS[@]/#/fuzz_}" || exit 1
fi

# The tokenize target encodes with llama.cpp's GGUF test vocabularies (fixtures).
export UAII_FUZZ_FIXTURES=${UAII_FUZZ_FIXTURES:-$PWD/${UAII_BUILD_DIR:-build}/fixtures}
if [ ! -d "$UAII_FUZZ_FIXTURES/llama-vocab" ]; then
  make_fixtures "$UAII_FUZZ_FIXTURES" || exit 1
fi

dict_of() {
  case "$1" in
    gguf) echo fuzz/dict/gguf.dict ;;
    jinja) echo fuzz/dict/jinja.dict ;;
    output_parser) echo fuzz/dict/output_parser.dict ;;
    tokenize) echo fuzz/dict/tokenize.dict ;;
    grammar) echo fuzz/dict/gbnf.dict ;;
    safetensors|safetensors_index|hf_config|tokenizer_json|ir_graph|chat_request|hub|server_request) echo fuzz/dict/json.dict ;;
  esac
}

mkdir -p "$CACHE/artifacts"
if [ "$MERGE" = 1 ]; then
  for t in "${TARGETS[@]}"; do
    small=$(mktemp -d)
    find "$CACHE/$t" -type f -size -16k -exec cp {} "$small/" \; 2>/dev/null
    before=$(ls fuzz/corpus/"$t" | wc -l)
    "$BUILD/fuzz/fuzz_$t" -merge=1 "fuzz/corpus/$t" "$small" >/dev/null 2>&1
    echo "fuzz: $t: $before -> $(ls fuzz/corpus/"$t" | wc -l) seeds"
    rm -rf "$small"
  done
  exit 0
fi

run_one() {
  local t=$1 dict log
  dict=$(dict_of "$t")
  log="$CACHE/$t.log"
  mkdir -p "$CACHE/$t"
  local t0=$(date +%s)
  "$BUILD/fuzz/fuzz_$t" -max_total_time="$SECONDS_PER" -timeout=20 -rss_limit_mb=2560 -print_final_stats=1 \
    ${dict:+-dict="$dict"} -artifact_prefix="$CACHE/artifacts/$t-" "$CACHE/$t" "fuzz/corpus/$t" >"$log" 2>&1
  local rc=$? execs files outcome=ok elapsed=$(( $(date +%s) - t0 ))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  files=$(ls "$CACHE/$t" | wc -l)
  [ $rc = 0 ] || outcome="FAILED(rc=$rc)"
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$t" "$elapsed" "${execs:-?}" "$files" "$outcome" >>"$CACHE/stats.tsv"
  echo "fuzz: $t: ${execs:-?} executions in $elapsed s, corpus $files files: $outcome"
  if [ $rc != 0 ]; then grep -E '^==[0-9]+==ERROR|^SUMMARY|Test unit written' "$log" | head -5 >&2; fi
  return $rc
}

failed=()
pids=()
names=()
for t in "${TARGETS[@]}"; do
  run_one "$t" & pids+=($!); names+=("$t")
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do sleep 1; done
done
for i in "${!pids[@]}"; do wait "${pids[$i]}" || failed+=("${names[$i]}"); done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]} (inputs in $CACHE/artifacts/, logs in $CACHE/<target>.log)" >&2
  exit 1
fi
echo "fuzz: every target ran clean (${#TARGETS[@]} targets, $SECONDS_PER s each)"
