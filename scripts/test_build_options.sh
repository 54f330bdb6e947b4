#!/usr/bin/env bash
# The build without its optional pieces (docs/building.md, "Checks"), after
# scripts/setup.sh:
#   1. a configure that cannot find liburing, libedit or Catch2 succeeds with those
#      pieces off, saying what is missing, and fails when one of them is asked for (ON);
#   2. a second build directory (build-options/, or $UAII_OPTIONS_BUILD_DIR) with every
#      optional piece off builds; neither libuaii.so nor uaii links liburing or libedit;
#      no benchmark is built;
#   3. its ctest passes (moe_cache_io_test checks that the expert cache reads with
#      pread), and `uaii generate --json` on a MoE fixture under a budget reports
#      expert reads through pread, with the unbudgeted run's tokens; `uaii chat` on a
#      pseudo-terminal works with the plain line reader (test_chat_cli.py -k terminal).
#   bash scripts/test_build_options.sh
set -uo pipefail
cd "$(dirname "$0")/.."
DIR=${UAII_OPTIONS_BUILD_DIR:-build-options}
fail() { echo "test_build_options: FAIL: $*" >&2; exit 1; }
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true

# 1. Packages absent: pkg-config sees only sentencepiece (a core dependency), and
#    Catch2's CMake package is disabled.
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
mkdir -p "$probe/pc"
cp "$(pkg-config --variable=pcfiledir sentencepiece)/sentencepiece.pc" "$probe/pc/"
absent() { PKG_CONFIG_LIBDIR="$probe/pc" cmake -S . -G Ninja -DCMAKE_DISABLE_FIND_PACKAGE_Catch2=ON "$@" 2>&1; }
out=$(absent -B "$probe/auto") || fail "the configure without liburing, libedit and Catch2 failed:
$out"
for want in "UAII_IO_URING is off: liburing was not found" "UAII_LIBEDIT is off: libedit was not found" \
            "UAII_BUILD_TESTS is off: Catch2 or zlib was not found" \
            "UAII_BUILD_TESTS=OFF, UAII_IO_URING=OFF, UAII_LIBEDIT=OFF"; do
  grep -qF -- "$want" <<<"$out" || fail "the configure without the optional packages did not say '$want':
$out"
done
for opt in UAII_IO_URING UAII_LIBEDIT UAII_BUILD_TESTS; do
  if out=$(absent -B "$probe/on-$opt" "-D$opt=ON"); then fail "-D$opt=ON configured without its package"; fi
  grep -qF "uaii: $opt is ON but" <<<"$out" || fail "-D$opt=ON failed without naming what is missing:
$out"
done
echo "test_build_options: a configure without liburing, libedit and Catch2 turns them off; ON fails naming them"

# 2. Every optional piece off.
cmake -S . -B "$DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
  -DUAII_IO_URING=OFF -DUAII_LIBEDIT=OFF -DUAII_BUILD_BENCHMARKS=OFF -DUAII_ONEDNN=OFF \
  -DUAII_BUILD_SWIFT=OFF -DUAII_BUILD_KOTLIN=OFF -DUAII_SERVER=OFF -DUAII_BUILD_TESTS=ON >/dev/null || fail "configure of $DIR"
cmake --build "$DIR" -j"$(nproc)" || fail "build of $DIR"
for bin in "$DIR/uaii" "$DIR/libuaii.so.0"; do
  if ldd "$bin" | grep -E "liburing|libedit|httplib"; then fail "$bin links an optional library that was turned off"; fi
done
serve_out=$("$DIR/uaii" serve 2>&1 || true)
[[ $serve_out == *"this build has no server"* ]] || fail "uaii serve without UAII_SERVER does not say so: $serve_out"
if compgen -G "$DIR/benchmarks/*bench*" >/dev/null; then fail "benchmarks built with UAII_BUILD_BENCHMARKS=OFF"; fi
echo "test_build_options: $DIR built without liburing, libedit, the server and the benchmarks"

# 3. Its tests, and the CLI's report of the expert reads.
source scripts/common.sh
make_fixtures "$DIR/fixtures" >/dev/null || fail "fixtures"
ctest --test-dir "$DIR" -LE slow --output-on-failure -j"$(nproc)" || fail "ctest in $DIR"
moe="$DIR/fixtures/moe/mixtral-q4_0.gguf"
gen() { "$DIR/uaii" generate --model "$moe" -p "hello world" --max-tokens 8 --max-context 64 --json "$@" 2>/dev/null; }
budgeted=$(gen --ram-gb 0.004) || fail "uaii generate under a budget"
unbudgeted=$(gen --preset none) || fail "uaii generate without a budget"
python3 - "$budgeted" "$unbudgeted" <<'EOF' || fail "the expert cache's report"
import json, sys
got, ref = json.loads(sys.argv[1]), json.loads(sys.argv[2])
ec = got["memory"]["expert_cache"]
assert ec["io"] == "pread", ec
assert ec["misses"] > 0 and ec["bytes_read"] > 0, ec
assert got["tokens"] == ref["tokens"], (got["tokens"], ref["tokens"])
print(f"test_build_options: expert reads through pread ({ec['misses']} misses, {ec['bytes_read']} bytes), "
      "the unbudgeted run's tokens")
EOF
# `uaii chat` on a terminal without libedit: the plain line reader (cli/line_reader.h)
# shows the prompt, keeps the conversation across turns and Ctrl-C stops a reply.
UAII_BUILD_DIR="$DIR" python3 -m pytest tests/python/test_chat_cli.py -k terminal -q -p no:cacheprovider \
  || fail "uaii chat on a terminal without libedit"
echo "test_build_options: ok"
